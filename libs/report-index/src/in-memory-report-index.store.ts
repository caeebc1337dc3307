import type { RecommendationIndexEntry, ReportIndexEntry } from '@tda/contracts';
import {
  ID_PATTERNS,
  prepareRecommendationEntry,
  prepareReportEntry,
  readRecommendationEntry,
  readReportEntry,
} from './index-entries';
import {
  compareIndexPosition,
  recommendationPosition,
  reportPosition,
  scanPage,
  validateRecommendationListQuery,
  validateReportListQuery,
  type IndexEqualityFilters,
  type IndexPosition,
  type OrderedRead,
} from './index-list';
import type {
  IndexCreateOutcome,
  RecommendationListPage,
  RecommendationListQuery,
  ReportIndexStore,
  ReportListPage,
  ReportListQuery,
} from './report-index-store.port';

function matches(entry: object, equality: IndexEqualityFilters): boolean {
  const fields = entry as Record<string, unknown>;
  return Object.entries(equality).every(([field, value]) => fields[field] === value);
}

/** An OrderedRead over a snapshot of `entries` (sorted once per page, copies handed out). */
function orderedRead<T>(
  entries: readonly T[],
  positionOf: (entry: T) => IndexPosition,
  accept: (entry: T) => boolean,
): OrderedRead<T> {
  const sorted = entries
    .filter(accept)
    .sort((a, b) => compareIndexPosition(positionOf(a), positionOf(b)));
  return (after, count) => {
    const start =
      after === null
        ? 0
        : sorted.findIndex((entry) => compareIndexPosition(positionOf(entry), after) > 0);
    const slice = start < 0 ? [] : sorted.slice(start, start + count);
    return Promise.resolve(structuredClone(slice));
  };
}

/**
 * ReportIndexStore in process memory (TDA_BACKEND=memory, tests): the same rules as the Firestore
 * adapter (shared entry checks, order and paging), proven by the conformance suite. Every call
 * resolves asynchronously and hands out copies, like a remote store.
 */
export class InMemoryReportIndexStore implements ReportIndexStore {
  private readonly reports = new Map<string, ReportIndexEntry>();
  private readonly recommendations = new Map<string, RecommendationIndexEntry>();

  async createReport(entry: ReportIndexEntry): Promise<IndexCreateOutcome> {
    await Promise.resolve();
    const stored = prepareReportEntry(entry);
    if (this.reports.has(stored.reportId)) return 'exists';
    this.reports.set(stored.reportId, stored);
    return 'created';
  }

  async createRecommendation(entry: RecommendationIndexEntry): Promise<IndexCreateOutcome> {
    await Promise.resolve();
    const stored = prepareRecommendationEntry(entry);
    if (this.recommendations.has(stored.recoId)) return 'exists';
    this.recommendations.set(stored.recoId, stored);
    return 'created';
  }

  async getReport(reportId: string): Promise<ReportIndexEntry | null> {
    await Promise.resolve();
    if (!ID_PATTERNS.report.test(reportId)) return null;
    const stored = this.reports.get(reportId);
    return stored === undefined ? null : readReportEntry(reportId, structuredClone(stored));
  }

  async getRecommendation(recoId: string): Promise<RecommendationIndexEntry | null> {
    await Promise.resolve();
    if (!ID_PATTERNS.recommendation.test(recoId)) return null;
    const stored = this.recommendations.get(recoId);
    return stored === undefined ? null : readRecommendationEntry(recoId, structuredClone(stored));
  }

  async listReports(query: ReportListQuery): Promise<ReportListPage> {
    const { limit, after, equality, asOfAtOrBefore } = validateReportListQuery(query);
    const read = orderedRead(
      [...this.reports.values()],
      reportPosition,
      (e) => matches(e, equality) && (asOfAtOrBefore === undefined || e.asOf <= asOfAtOrBefore),
    );
    const page = await scanPage(read, {
      kind: 'report',
      limit,
      after,
      positionOf: reportPosition,
    });
    return { reports: page.items, nextCursor: page.nextCursor };
  }

  async listRecommendations(query: RecommendationListQuery): Promise<RecommendationListPage> {
    const { limit, after, equality, minStrength } = validateRecommendationListQuery(query);
    const read = orderedRead([...this.recommendations.values()], recommendationPosition, (e) =>
      matches(e, equality),
    );
    const page = await scanPage(read, {
      kind: 'recommendation',
      limit,
      after,
      positionOf: recommendationPosition,
      ...(minStrength === undefined ? {} : { keep: (e) => e.signal_strength >= minStrength }),
    });
    return { recommendations: page.items, nextCursor: page.nextCursor };
  }
}
