import {
  TIMEFRAMES,
  type RecommendationIndexEntry,
  type ReportIndexEntry,
  type Timeframe,
} from '@tda/contracts';
import { ID_PATTERNS, canonicalInstant, isCanonicalInstant, type IndexKind } from './index-entries';
import { InvalidIndexCursorError, InvalidIndexQueryError } from './report-index.errors';
import {
  INDEX_LIST_LIMIT_MAX,
  type RecommendationListQuery,
  type ReportListQuery,
} from './report-index-store.port';
import { SYMBOL_KEY_PATTERN } from './symbol-key';

/** Keyset position: the (asOf, createdAt, id) of the last entry a page covered. */
export interface IndexPosition {
  asOf: string;
  createdAt: string;
  id: string;
}

export const reportPosition = (e: ReportIndexEntry): IndexPosition => ({
  asOf: e.asOf,
  createdAt: e.createdAt,
  id: e.reportId,
});

export const recommendationPosition = (e: RecommendationIndexEntry): IndexPosition => ({
  asOf: e.asOf,
  createdAt: e.createdAt,
  id: e.recoId,
});

/** Bumped if the cursor payload ever changes, so an old cursor is rejected, not misread. */
const CURSOR_VERSION = 1;
const CURSOR_KIND: Readonly<Record<IndexKind, string>> = { report: 'rpt', recommendation: 'rec' };

export function encodeIndexCursor(kind: IndexKind, position: IndexPosition): string {
  const payload = {
    v: CURSOR_VERSION,
    k: CURSOR_KIND[kind],
    a: position.asOf,
    c: position.createdAt,
    i: position.id,
  };
  return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
}

function parseCursorPayload(cursor: string): Record<string, unknown> {
  if (cursor.length === 0 || cursor.length > 512 || !/^[A-Za-z0-9_-]+$/.test(cursor)) {
    throw new InvalidIndexCursorError('not a base64url token');
  }
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidIndexCursorError('not a cursor of this list');
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    throw new InvalidIndexCursorError('not a cursor of this list');
  }
  return payload as Record<string, unknown>;
}

export function decodeIndexCursor(kind: IndexKind, cursor: string): IndexPosition {
  const { v, k, a, c, i } = parseCursorPayload(cursor);
  if (v !== CURSOR_VERSION) throw new InvalidIndexCursorError('unsupported cursor version');
  if (k !== CURSOR_KIND[kind]) throw new InvalidIndexCursorError(`not a cursor of the ${kind}s`);
  if (typeof a !== 'string' || !isCanonicalInstant(a))
    throw new InvalidIndexCursorError('bad asOf');
  if (typeof c !== 'string' || !isCanonicalInstant(c)) {
    throw new InvalidIndexCursorError('bad createdAt');
  }
  if (typeof i !== 'string' || !ID_PATTERNS[kind].test(i))
    throw new InvalidIndexCursorError('bad id');
  const position = { asOf: a, createdAt: c, id: i };
  // Only the exact bytes this list produced are accepted (no re-encoded or padded variants).
  if (encodeIndexCursor(kind, position) !== cursor) {
    throw new InvalidIndexCursorError('not a cursor of this list');
  }
  return position;
}

/**
 * The list order: asOf desc, createdAt desc, id desc. Plain code-unit comparison: the instants
 * are canonical (Date#toISOString), so string order is time order, and ids are ASCII, compared
 * the way Firestore orders document ids.
 */
export function compareIndexPosition(a: IndexPosition, b: IndexPosition): number {
  if (a.asOf !== b.asOf) return a.asOf < b.asOf ? 1 : -1;
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? 1 : -1;
  if (a.id !== b.id) return a.id < b.id ? 1 : -1;
  return 0;
}

/** Equality filters, in the order the Firestore adapter applies them. */
export interface IndexEqualityFilters {
  ownerId: string;
  symbolKey?: string;
  timeframe?: Timeframe;
}

export interface ValidReportListQuery {
  limit: number;
  after: IndexPosition | null;
  equality: IndexEqualityFilters;
  /** Canonical instant: asOf <= this. */
  asOfAtOrBefore?: string;
}

export interface ValidRecommendationListQuery {
  limit: number;
  after: IndexPosition | null;
  equality: IndexEqualityFilters;
  minStrength?: number;
}

function fail(message: string, parameter: string): never {
  throw new InvalidIndexQueryError(message, { parameter });
}

function checkCommon(query: { ownerId: string; limit: number; symbolKey?: string }): void {
  const { ownerId, limit, symbolKey } = query;
  if (typeof ownerId !== 'string' || ownerId.length < 1 || ownerId.length > 200) {
    fail('ownerId must be 1..200 characters', 'ownerId');
  }
  if (!Number.isInteger(limit) || limit < 1 || limit > INDEX_LIST_LIMIT_MAX) {
    fail(`limit must be an integer in 1..${INDEX_LIST_LIMIT_MAX}`, 'limit');
  }
  if (symbolKey !== undefined && !SYMBOL_KEY_PATTERN.test(symbolKey)) {
    fail('symbolKey must be BASE+QUOTE in upper case without separators (BTCUSDT)', 'symbolKey');
  }
}

function equalityOf(query: { ownerId: string; symbolKey?: string }): IndexEqualityFilters {
  const equality: IndexEqualityFilters = { ownerId: query.ownerId };
  if (query.symbolKey !== undefined) equality.symbolKey = query.symbolKey;
  return equality;
}

export function validateReportListQuery(query: ReportListQuery): ValidReportListQuery {
  checkCommon(query);
  const { timeframe, asOfAtOrBefore, cursor } = query;
  if (timeframe !== undefined && !(TIMEFRAMES as readonly string[]).includes(timeframe)) {
    fail(`timeframe must be one of ${TIMEFRAMES.join(', ')}`, 'timeframe');
  }
  const valid: ValidReportListQuery = {
    limit: query.limit,
    after: cursor === undefined ? null : decodeIndexCursor('report', cursor),
    equality: { ...equalityOf(query), ...(timeframe === undefined ? {} : { timeframe }) },
  };
  if (asOfAtOrBefore !== undefined) {
    if (typeof asOfAtOrBefore !== 'string' || !Number.isFinite(Date.parse(asOfAtOrBefore))) {
      fail('asOfAtOrBefore must be an RFC 3339 instant', 'asOfAtOrBefore');
    }
    valid.asOfAtOrBefore = canonicalInstant(asOfAtOrBefore);
  }
  return valid;
}

export function validateRecommendationListQuery(
  query: RecommendationListQuery,
): ValidRecommendationListQuery {
  checkCommon(query);
  const { minStrength, cursor } = query;
  if (
    minStrength !== undefined &&
    (typeof minStrength !== 'number' || !(minStrength >= 0 && minStrength <= 1))
  ) {
    fail('minStrength must be a number in 0..1', 'minStrength');
  }
  return {
    limit: query.limit,
    after: cursor === undefined ? null : decodeIndexCursor('recommendation', cursor),
    equality: equalityOf(query),
    ...(minStrength === undefined ? {} : { minStrength }),
  };
}

/** Reads up to `count` entries in list order strictly after `after` (null: from the start). */
export type OrderedRead<T> = (after: IndexPosition | null, count: number) => Promise<T[]>;

export interface ScanOptions<T> {
  kind: IndexKind;
  limit: number;
  after: IndexPosition | null;
  positionOf: (entry: T) => IndexPosition;
  /** A filter the query cannot express (minStrength); absent: every entry read is kept. */
  keep?: (entry: T) => boolean;
}

/** Entries a filtered page reads at most before it answers with what it has. */
export const MAX_FILTERED_SCAN = 500;

/**
 * One page from an ordered source, shared by every adapter so that they page identically.
 * Unfiltered: one read of limit + 1 (the extra entry only proves there is more). Filtered: reads
 * in batches, keeping matches, until limit + 1 matches, the end, or MAX_FILTERED_SCAN entries;
 * then the cursor is the last entry read, so the next page goes on from there.
 */
export async function scanPage<T>(
  read: OrderedRead<T>,
  options: ScanOptions<T>,
): Promise<{ items: T[]; nextCursor: string | null }> {
  const { kind, limit, positionOf, keep } = options;
  const batch = keep === undefined ? limit + 1 : Math.max(limit + 1, 50);
  const items: T[] = [];
  let last = options.after;
  let scanned = 0;
  for (;;) {
    const entries = await read(last, batch);
    for (const entry of entries) {
      scanned += 1;
      if (keep === undefined || keep(entry)) {
        const previous = items[limit - 1];
        if (previous !== undefined) {
          return { items, nextCursor: encodeIndexCursor(kind, positionOf(previous)) };
        }
        items.push(entry);
      }
      last = positionOf(entry);
    }
    if (entries.length < batch) return { items, nextCursor: null };
    if (scanned >= MAX_FILTERED_SCAN && last !== null) {
      return { items, nextCursor: encodeIndexCursor(kind, last) };
    }
  }
}
