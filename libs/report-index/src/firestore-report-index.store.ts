import {
  type CollectionReference,
  FieldPath,
  type Firestore,
  GrpcStatus,
  type Query,
} from '@google-cloud/firestore';
import { firestoreGrpcCode, guardFirestoreCall } from '@tda/flow-store';
import type { RecommendationIndexEntry, ReportIndexEntry } from '@tda/contracts';
import {
  ID_PATTERNS,
  prepareRecommendationEntry,
  prepareReportEntry,
  readRecommendationEntry,
  readReportEntry,
} from './index-entries';
import {
  recommendationPosition,
  reportPosition,
  scanPage,
  validateRecommendationListQuery,
  validateReportListQuery,
  type IndexEqualityFilters,
  type OrderedRead,
} from './index-list';
import { IndexStoreUnavailableError } from './report-index.errors';
import {
  DEFAULT_RECOMMENDATIONS_COLLECTION,
  DEFAULT_REPORTS_COLLECTION,
  type IndexCreateOutcome,
  type RecommendationListPage,
  type RecommendationListQuery,
  type ReportIndexStore,
  type ReportListPage,
  type ReportListQuery,
} from './report-index-store.port';

export interface FirestoreReportIndexStoreOptions {
  /** Collection of the report entries (default `reports`); tests use a unique one each. */
  reportsCollection?: string;
  /** Collection of the recommendation entries (default `recommendations`). */
  recommendationsCollection?: string;
}

/**
 * ReportIndexStore on Firestore: `reports/{reportId}` and `recommendations/{recoId}`, doc id =
 * entry id. Creates use `DocumentReference.create` (fails with ALREADY_EXISTS, so create-only
 * needs no read and no transaction). Lists are one query each: the equality filters (ownerId,
 * then symbolKey, timeframe), `asOf <= x` for asOfAtOrBefore, ordered asOf desc, createdAt desc,
 * __name__ desc; deploy/firestore/firestore.indexes.json holds their composite indexes
 * (firestore-index-coverage.spec.ts checks every shape).
 */
export class FirestoreReportIndexStore implements ReportIndexStore {
  private readonly reports: CollectionReference;
  private readonly recommendations: CollectionReference;

  constructor(firestore: Firestore, options: FirestoreReportIndexStoreOptions = {}) {
    this.reports = firestore.collection(options.reportsCollection ?? DEFAULT_REPORTS_COLLECTION);
    this.recommendations = firestore.collection(
      options.recommendationsCollection ?? DEFAULT_RECOMMENDATIONS_COLLECTION,
    );
  }

  createReport(entry: ReportIndexEntry): Promise<IndexCreateOutcome> {
    return this.guarded('createReport', () => {
      const stored = prepareReportEntry(entry);
      return this.createDocument(this.reports, stored.reportId, stored);
    });
  }

  createRecommendation(entry: RecommendationIndexEntry): Promise<IndexCreateOutcome> {
    return this.guarded('createRecommendation', () => {
      const stored = prepareRecommendationEntry(entry);
      return this.createDocument(this.recommendations, stored.recoId, stored);
    });
  }

  getReport(reportId: string): Promise<ReportIndexEntry | null> {
    return this.guarded('getReport', async () => {
      if (!ID_PATTERNS.report.test(reportId)) return null;
      const data = (await this.reports.doc(reportId).get()).data();
      return data === undefined ? null : readReportEntry(reportId, data);
    });
  }

  getRecommendation(recoId: string): Promise<RecommendationIndexEntry | null> {
    return this.guarded('getRecommendation', async () => {
      if (!ID_PATTERNS.recommendation.test(recoId)) return null;
      const data = (await this.recommendations.doc(recoId).get()).data();
      return data === undefined ? null : readRecommendationEntry(recoId, data);
    });
  }

  listReports(query: ReportListQuery): Promise<ReportListPage> {
    return this.guarded('listReports', async () => {
      const { limit, after, equality, asOfAtOrBefore } = validateReportListQuery(query);
      let base = filtered(this.reports, equality);
      if (asOfAtOrBefore !== undefined) base = base.where('asOf', '<=', asOfAtOrBefore);
      const read = orderedRead(base, (id, data) => readReportEntry(id, data));
      const page = await scanPage(read, {
        kind: 'report',
        limit,
        after,
        positionOf: reportPosition,
      });
      return { reports: page.items, nextCursor: page.nextCursor };
    });
  }

  listRecommendations(query: RecommendationListQuery): Promise<RecommendationListPage> {
    return this.guarded('listRecommendations', async () => {
      const { limit, after, equality, minStrength } = validateRecommendationListQuery(query);
      const read = orderedRead(filtered(this.recommendations, equality), (id, data) =>
        readRecommendationEntry(id, data),
      );
      const page = await scanPage(read, {
        kind: 'recommendation',
        limit,
        after,
        positionOf: recommendationPosition,
        ...(minStrength === undefined ? {} : { keep: (e) => e.signal_strength >= minStrength }),
      });
      return { recommendations: page.items, nextCursor: page.nextCursor };
    });
  }

  private async createDocument(
    collection: CollectionReference,
    id: string,
    doc: object,
  ): Promise<IndexCreateOutcome> {
    try {
      await collection.doc(id).create(doc);
      return 'created';
    } catch (error) {
      if (firestoreGrpcCode(error) === GrpcStatus.ALREADY_EXISTS) return 'exists';
      throw error;
    }
  }

  /** Every call, with Firestore's transient failures as a retryable IndexStoreUnavailableError. */
  private guarded<T>(operation: string, call: () => Promise<T>): Promise<T> {
    return guardFirestoreCall(
      call,
      (status, cause) => new IndexStoreUnavailableError(operation, status, cause),
    );
  }
}

function filtered(collection: CollectionReference, equality: IndexEqualityFilters): Query {
  let query: Query = collection;
  for (const [field, value] of Object.entries(equality)) query = query.where(field, '==', value);
  return query;
}

/** The list order on `base` (asOf desc, createdAt desc, __name__ desc), read after a position. */
function orderedRead<T>(
  base: Query,
  read: (id: string, data: Record<string, unknown>) => T,
): OrderedRead<T> {
  const ordered = base
    .orderBy('asOf', 'desc')
    .orderBy('createdAt', 'desc')
    .orderBy(FieldPath.documentId(), 'desc');
  return async (after, count) => {
    const from =
      after === null ? ordered : ordered.startAfter(after.asOf, after.createdAt, after.id);
    const snapshot = await from.limit(count).get();
    return snapshot.docs.map((doc) => read(doc.id, doc.data()));
  };
}
