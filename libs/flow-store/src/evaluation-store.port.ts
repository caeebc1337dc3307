import type { RecommendationEvaluation } from '@tda/contracts';

/** evaluations/{evaluationId} (issue 15: walk-forward evaluations of recommendations). */
export const DEFAULT_EVALUATIONS_COLLECTION = 'evaluations';

export interface VersionedEvaluation {
  evaluation: RecommendationEvaluation;
  /** Opaque: handed back to `update` as its precondition. */
  version: string;
}

/** What `update` may change: the points (their runIds) and the cancel request. */
export interface EvaluationChanges {
  points?: RecommendationEvaluation['points'];
  cancelRequestedAt?: string;
}

export interface EvaluationListQuery {
  /** Only this owner's evaluations (in the query). */
  ownerId: string;
  /** 1..SCHEDULE_LIST_LIMIT_MAX. */
  limit: number;
  cursor?: string;
}

export interface EvaluationListPage {
  /** createdAt desc, then evaluationId desc. */
  evaluations: RecommendationEvaluation[];
  nextCursor: string | null;
}

/**
 * Persistence of walk-forward evaluations. Semantics shared by every adapter (conformance suite
 * in `@tda/flow-store/testing`):
 *
 * - `createOnce` is create-only by evaluationId: 'created' the first time, 'exists' afterwards
 *   (the id derives from the owner's idempotency key, so a retried POST finds the first one). The
 *   document is checked first (InvalidEvaluationError, nothing written).
 * - `get` reads leniently; a broken stored document → InvalidStoredDocumentError; a string that
 *   is not an EvaluationId is "not found".
 * - `update` applies EvaluationChanges only at `expectedVersion` (EvaluationVersionConflictError
 *   otherwise, nothing written), stamps updatedAt and checks the result; a missing evaluation →
 *   EvaluationNotFoundError.
 * - `list`: one owner's evaluations, createdAt desc then evaluationId desc, keyset pages.
 */
export interface EvaluationStore {
  createOnce(evaluation: RecommendationEvaluation): Promise<'created' | 'exists'>;
  get(evaluationId: string): Promise<VersionedEvaluation | null>;
  update(
    evaluationId: string,
    changes: EvaluationChanges,
    expectedVersion: string,
  ): Promise<VersionedEvaluation>;
  list(query: EvaluationListQuery): Promise<EvaluationListPage>;
}
