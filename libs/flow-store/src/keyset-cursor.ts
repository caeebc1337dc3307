import { TIMESTAMP_PATTERN } from '@tda/contracts';
import { InvalidScheduleListQueryError } from './schedule-store.errors';
import { SCHEDULE_LIST_LIMIT_MAX } from './schedule-store.port';

/** Keyset position of a list ordered createdAt desc, then id desc: the last row of a page. */
export interface KeysetPosition {
  createdAt: string;
  id: string;
}

/** Bumped if the payload changes, so an old cursor is refused instead of misread. */
const CURSOR_VERSION = 1;

export function encodeKeysetCursor(position: KeysetPosition): string {
  const payload = { v: CURSOR_VERSION, createdAt: position.createdAt, id: position.id };
  return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
}

/** The position a cursor of this store continues after; undefined for anything else. */
export function decodeKeysetCursor(cursor: string, idPattern: RegExp): KeysetPosition | undefined {
  if (cursor.length === 0 || cursor.length > 512 || !/^[A-Za-z0-9_-]+$/.test(cursor)) {
    return undefined;
  }
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof payload !== 'object' || payload === null) return undefined;
  const { v, createdAt, id } = payload as Record<string, unknown>;
  if (v !== CURSOR_VERSION || typeof createdAt !== 'string' || typeof id !== 'string') {
    return undefined;
  }
  if (!TIMESTAMP_PATTERN.test(createdAt) || !idPattern.test(id)) return undefined;
  // Only the exact bytes this store produced (no re-encoded or padded variants).
  return encodeKeysetCursor({ createdAt, id }) === cursor ? { createdAt, id } : undefined;
}

export interface ValidKeysetQuery {
  ownerId: string;
  limit: number;
  after: KeysetPosition | null;
}

/** Checks limit, owner and cursor of a list query (InvalidScheduleListQueryError). */
export function validateKeysetQuery(
  query: { ownerId: string; limit: number; cursor?: string },
  idPattern: RegExp,
): ValidKeysetQuery {
  const { ownerId, limit, cursor } = query;
  if (!Number.isInteger(limit) || limit < 1 || limit > SCHEDULE_LIST_LIMIT_MAX) {
    throw new InvalidScheduleListQueryError(
      `limit must be an integer in 1..${SCHEDULE_LIST_LIMIT_MAX}`,
      { limit },
    );
  }
  if (typeof ownerId !== 'string' || ownerId === '') {
    throw new InvalidScheduleListQueryError('ownerId is required');
  }
  if (cursor === undefined) return { ownerId, limit, after: null };
  const after = decodeKeysetCursor(cursor, idPattern);
  if (after === undefined) throw new InvalidScheduleListQueryError('not a cursor of this list');
  return { ownerId, limit, after };
}

/**
 * createdAt desc, then id desc: plain code-unit comparison, Firestore's order for these ASCII
 * strings (createdAt written by Date#toISOString, so string order is time order).
 */
export function compareKeysetDesc(a: KeysetPosition, b: KeysetPosition): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? 1 : -1;
  if (a.id !== b.id) return a.id < b.id ? 1 : -1;
  return 0;
}

/** `limit + 1` ordered rows → one page and the cursor after its last row. */
export function keysetPage<T>(
  rows: readonly T[],
  limit: number,
  positionOf: (row: T) => KeysetPosition,
): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return {
    items,
    nextCursor:
      rows.length > limit && last !== undefined ? encodeKeysetCursor(positionOf(last)) : null,
  };
}

/** listDue's limit: 1..SCHEDULE_LIST_LIMIT_MAX. */
export function assertDueLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1 || limit > SCHEDULE_LIST_LIMIT_MAX) {
    throw new InvalidScheduleListQueryError(
      `limit must be an integer in 1..${SCHEDULE_LIST_LIMIT_MAX}`,
      { limit },
    );
  }
}
