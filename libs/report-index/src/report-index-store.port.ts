import type { RecommendationIndexEntry, ReportIndexEntry, Timeframe } from '@tda/contracts';

export const INDEX_LIST_LIMIT_MAX = 100;
export const DEFAULT_REPORTS_COLLECTION = 'reports';
export const DEFAULT_RECOMMENDATIONS_COLLECTION = 'recommendations';

/** What a create-only write did: wrote the entry, or found one under the same id (nothing written). */
export type IndexCreateOutcome = 'created' | 'exists';

export interface ReportListQuery {
  /** Only this owner's entries (filtered in the query, never after it). */
  ownerId: string;
  /** symbolKeyOf(symbol): BTC-USDT, BTC/USDT and BTCUSDT all match BTCUSDT. */
  symbolKey?: string;
  timeframe?: Timeframe;
  /** Only reports whose asOf is at or before this instant (RFC 3339). */
  asOfAtOrBefore?: string;
  /** Page size, 1..INDEX_LIST_LIMIT_MAX. */
  limit: number;
  /** `nextCursor` of the previous page of the same query; omit for the first page. */
  cursor?: string;
}

export interface RecommendationListQuery {
  ownerId: string;
  symbolKey?: string;
  /** Only recommendations with signal_strength >= minStrength (0..1). */
  minStrength?: number;
  limit: number;
  cursor?: string;
}

export interface ReportListPage {
  /** Newest first: asOf desc, then createdAt desc, then reportId desc. */
  reports: ReportIndexEntry[];
  /** null when nothing more matches. */
  nextCursor: string | null;
}

export interface RecommendationListPage {
  /** Newest first: asOf desc, then createdAt desc, then recoId desc. */
  recommendations: RecommendationIndexEntry[];
  nextCursor: string | null;
}

/**
 * The reports/{reportId} and recommendations/{recoId} index (seed 001, DESIGN §2-§3). Every
 * adapter has the same semantics, proven by the conformance suite in `@tda/report-index/testing`:
 *
 * - `createReport` / `createRecommendation` are create-only: the entry is validated against its
 *   contract (and its asOf/createdAt must be canonical `Date#toISOString` instants, so that the
 *   string order the queries sort by is the time order), then written only if the id is new.
 *   An existing id answers 'exists' and leaves the stored entry untouched: ids are deterministic
 *   per (runId, stepId), so an existing entry describes the same report.
 * - `get*` return the entry or null (also for a string that is not an id of that kind). They are
 *   not owner-filtered: the caller compares `ownerId` (the API answers 404 for another owner's).
 * - `list*` are filtered by owner in the query and keyset-paginated newest first by
 *   (asOf desc, createdAt desc, id desc): the moment the entry describes first, so "the latest
 *   report of a timeframe at or before asOf" (flow 3) is the first entry of
 *   `listReports({ ownerId, symbolKey, timeframe, asOfAtOrBefore: asOf, limit: 1 })`, one indexed
 *   query (see latestReportsByTimeframe). Cursors are opaque (base64url of the keyset position and
 *   the list kind); a malformed one, or one of the other list, is an InvalidIndexCursorError
 *   (INVALID_REQUEST, 400). Entries created after a page was read never appear on later pages
 *   unless they sort after it; nothing is skipped or repeated.
 * - `minStrength` is applied while reading in list order (Firestore cannot combine a range on
 *   signal_strength with the asOf order without sorting by strength first). A page holds up to
 *   `limit` matches; after a bounded scan it may hold fewer while `nextCursor` is not null.
 */
export interface ReportIndexStore {
  createReport(entry: ReportIndexEntry): Promise<IndexCreateOutcome>;
  createRecommendation(entry: RecommendationIndexEntry): Promise<IndexCreateOutcome>;
  getReport(reportId: string): Promise<ReportIndexEntry | null>;
  getRecommendation(recoId: string): Promise<RecommendationIndexEntry | null>;
  listReports(query: ReportListQuery): Promise<ReportListPage>;
  listRecommendations(query: RecommendationListQuery): Promise<RecommendationListPage>;
}
