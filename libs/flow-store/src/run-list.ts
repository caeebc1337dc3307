import { type FlowRun, RUN_ID_PATTERN, RUN_STATUSES } from '@tda/contracts';
import { InvalidCursorError, InvalidListQueryError } from './flow-store.errors';
import { LIST_LIMIT_MAX, type RunListQuery } from './flow-run-store.port';

/** Keyset position: the (createdAt, runId) of the last run of a page. */
export interface ListPosition {
  createdAt: string;
  runId: string;
}

/**
 * Bumped if the cursor payload ever changes, so an old cursor is rejected instead of being
 * misread.
 */
const CURSOR_VERSION = 1;

/** Mirrors the Timestamp definition of contracts/common.schema.json. */
const TIMESTAMP_PATTERN =
  /^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,9})?Z$/;

export function encodeCursor(position: ListPosition): string {
  const payload = { v: CURSOR_VERSION, createdAt: position.createdAt, runId: position.runId };
  return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): ListPosition {
  if (cursor.length === 0 || cursor.length > 512 || !/^[A-Za-z0-9_-]+$/.test(cursor)) {
    throw new InvalidCursorError('not a base64url token');
  }
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidCursorError('not a cursor of this store');
  }
  if (typeof payload !== 'object' || payload === null) {
    throw new InvalidCursorError('not a cursor of this store');
  }
  const { v, createdAt, runId } = payload as Record<string, unknown>;
  if (v !== CURSOR_VERSION) throw new InvalidCursorError('unsupported cursor version');
  if (typeof createdAt !== 'string' || !TIMESTAMP_PATTERN.test(createdAt)) {
    throw new InvalidCursorError('bad createdAt');
  }
  if (typeof runId !== 'string' || !RUN_ID_PATTERN.test(runId)) {
    throw new InvalidCursorError('bad runId');
  }
  // Only the exact bytes this store produced are accepted (no re-encoded or padded variants).
  if (encodeCursor({ createdAt, runId }) !== cursor) {
    throw new InvalidCursorError('not a cursor of this store');
  }
  return { createdAt, runId };
}

export interface ValidListQuery {
  limit: number;
  after: ListPosition | null;
  filters: ListFilters;
}

/** Equality filters, in the order the Firestore adapter applies them. */
export interface ListFilters {
  status?: string;
  flowKey?: string;
  ownerId?: string;
  idempotencyKey?: string;
  /** The run's scope.symbol, as triggered (a field path: both adapters resolve the dot). */
  'scope.symbol'?: string;
}

export function validateListQuery(query: RunListQuery): ValidListQuery {
  const { limit, cursor, status, flowKey, ownerId, idempotencyKey, symbol } = query;
  if (!Number.isInteger(limit) || limit < 1 || limit > LIST_LIMIT_MAX) {
    throw new InvalidListQueryError(`limit must be an integer in 1..${LIST_LIMIT_MAX}`, { limit });
  }
  if (status !== undefined && !(RUN_STATUSES as readonly string[]).includes(status)) {
    throw new InvalidListQueryError(`unknown run status '${String(status)}'`, { status });
  }
  const filters: ListFilters = {};
  if (status !== undefined) filters.status = status;
  if (flowKey !== undefined) filters.flowKey = flowKey;
  if (ownerId !== undefined) filters.ownerId = ownerId;
  if (idempotencyKey !== undefined) filters.idempotencyKey = idempotencyKey;
  if (symbol !== undefined) filters['scope.symbol'] = symbol;
  return { limit, after: cursor === undefined ? null : decodeCursor(cursor), filters };
}

/**
 * The list order: createdAt desc, then runId desc. Plain code-unit comparison, which for these
 * ASCII-only fields is the byte order Firestore sorts strings and document ids by. createdAt is
 * compared as a string, so it sorts chronologically when every writer uses the same precision
 * (Date#toISOString: milliseconds).
 */
export function compareListPosition(a: ListPosition, b: ListPosition): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? 1 : -1;
  if (a.runId !== b.runId) return a.runId < b.runId ? 1 : -1;
  return 0;
}

export function positionOf(run: FlowRun): ListPosition {
  return { createdAt: run.createdAt, runId: run.runId };
}

/** Builds a page from up to `limit + 1` ordered runs (the extra one only proves there is more). */
export function toPage(
  ordered: FlowRun[],
  limit: number,
): { runs: FlowRun[]; nextCursor: string | null } {
  const runs = ordered.slice(0, limit);
  const last = runs[runs.length - 1];
  const nextCursor =
    ordered.length > limit && last !== undefined ? encodeCursor(positionOf(last)) : null;
  return { runs, nextCursor };
}
