import {
  type CollectionReference,
  type DocumentReference,
  FieldPath,
  type Firestore,
  GrpcStatus,
} from '@google-cloud/firestore';
import type { RecommendationEvaluation } from '@tda/contracts';
import { EVALUATION_ID_PATTERN } from '@tda/flow-engine';
import {
  changedEvaluation,
  assertWritableEvaluation,
  EvaluationNotFoundError,
  EvaluationVersionConflictError,
  readEvaluationDocument,
} from './evaluation-documents';
import {
  DEFAULT_EVALUATIONS_COLLECTION,
  type EvaluationChanges,
  type EvaluationListPage,
  type EvaluationListQuery,
  type EvaluationStore,
  type VersionedEvaluation,
} from './evaluation-store.port';
import { firestoreGrpcCode, guardFirestoreCall } from './firestore-status';
import { firestoreTimestampOf, firestoreVersionOf } from './firestore-version';
import { keysetPage, validateKeysetQuery } from './keyset-cursor';
import { ScheduleStoreUnavailableError } from './schedule-store.errors';

export interface FirestoreEvaluationStoreOptions {
  /** Collection of the documents (default `evaluations`); tests use a unique one each. */
  collection?: string;
  clock?: () => Date;
}

/**
 * EvaluationStore on Firestore: `evaluations/{evaluationId}`. createOnce is
 * `DocumentReference.create` (ALREADY_EXISTS → 'exists'); update is a whole-document `set` under
 * the update-time precondition read (`lastUpdateTime`); list = ownerId ==, createdAt desc,
 * __name__ desc (composite index in deploy/firestore/firestore.indexes.json).
 */
export class FirestoreEvaluationStore implements EvaluationStore {
  private readonly collection: CollectionReference;
  private readonly clock: () => Date;

  constructor(firestore: Firestore, options: FirestoreEvaluationStoreOptions = {}) {
    this.collection = firestore.collection(options.collection ?? DEFAULT_EVALUATIONS_COLLECTION);
    this.clock = options.clock ?? (() => new Date());
  }

  createOnce(evaluation: RecommendationEvaluation): Promise<'created' | 'exists'> {
    return this.guarded('createOnce', async () => {
      const doc = assertWritableEvaluation(evaluation);
      try {
        await this.ref(doc.evaluationId).create(doc);
        return 'created';
      } catch (error) {
        if (firestoreGrpcCode(error) === GrpcStatus.ALREADY_EXISTS) return 'exists';
        throw error;
      }
    });
  }

  get(evaluationId: string): Promise<VersionedEvaluation | null> {
    return this.guarded('get', () => this.read(evaluationId));
  }

  update(
    evaluationId: string,
    changes: EvaluationChanges,
    expectedVersion: string,
  ): Promise<VersionedEvaluation> {
    return this.guarded('update', async () => {
      const current = await this.read(evaluationId);
      if (current === null) throw new EvaluationNotFoundError(evaluationId);
      const lastUpdateTime = firestoreTimestampOf(expectedVersion);
      if (current.version !== expectedVersion || lastUpdateTime === null) {
        throw new EvaluationVersionConflictError(evaluationId, expectedVersion);
      }
      const next = changedEvaluation(current.evaluation, changes, this.clock());
      try {
        const { writeTime } = await this.ref(evaluationId).update(
          { points: next.points, updatedAt: next.updatedAt, ...cancelField(next) },
          { lastUpdateTime },
        );
        return { evaluation: next, version: firestoreVersionOf(writeTime) };
      } catch (error) {
        const code = firestoreGrpcCode(error);
        if (code === GrpcStatus.NOT_FOUND) throw new EvaluationNotFoundError(evaluationId);
        if (code === GrpcStatus.FAILED_PRECONDITION || code === GrpcStatus.ABORTED) {
          throw new EvaluationVersionConflictError(evaluationId, expectedVersion);
        }
        throw error;
      }
    });
  }

  list(query: EvaluationListQuery): Promise<EvaluationListPage> {
    return this.guarded('list', async () => {
      const { ownerId, limit, after } = validateKeysetQuery(query, EVALUATION_ID_PATTERN);
      let q = this.collection
        .where('ownerId', '==', ownerId)
        .orderBy('createdAt', 'desc')
        .orderBy(FieldPath.documentId(), 'desc');
      if (after !== null) q = q.startAfter(after.createdAt, after.id);
      const snapshot = await q.limit(limit + 1).get();
      const rows = snapshot.docs.map((doc) => readEvaluationDocument(doc.id, doc.data()));
      const page = keysetPage(rows, limit, (e) => ({ createdAt: e.createdAt, id: e.evaluationId }));
      return { evaluations: page.items, nextCursor: page.nextCursor };
    });
  }

  private async read(evaluationId: string): Promise<VersionedEvaluation | null> {
    if (!EVALUATION_ID_PATTERN.test(evaluationId)) return null;
    const snapshot = await this.ref(evaluationId).get();
    const data = snapshot.data();
    const updateTime = snapshot.updateTime;
    if (!snapshot.exists || data === undefined || updateTime === undefined) return null;
    return {
      evaluation: readEvaluationDocument(evaluationId, data),
      version: firestoreVersionOf(updateTime),
    };
  }

  private guarded<T>(operation: string, call: () => Promise<T>): Promise<T> {
    return guardFirestoreCall(
      call,
      (status, cause) => new ScheduleStoreUnavailableError(operation, status, cause, 'evaluation'),
    );
  }

  private ref(evaluationId: string): DocumentReference {
    return this.collection.doc(evaluationId);
  }
}

function cancelField(next: RecommendationEvaluation): Record<string, string> {
  return next.cancelRequestedAt === undefined ? {} : { cancelRequestedAt: next.cancelRequestedAt };
}
