import {
  TdaError,
  validate,
  type RecommendationEvaluation,
  type ValidationIssue,
} from '@tda/contracts';
import type { EvaluationChanges } from './evaluation-store.port';
import { InvalidStoredDocumentError } from './schedule-store.errors';

/** Errors of every EvaluationStore adapter: ids only in details, never document contents. */
export class EvaluationStoreError extends TdaError {}

export class EvaluationNotFoundError extends EvaluationStoreError {
  constructor(readonly evaluationId: string) {
    super('NOT_FOUND', `evaluation '${evaluationId}' does not exist`, {
      details: { evaluationId },
    });
  }
}

/** The document changed since `expectedVersion` was read: re-read, re-decide, write again. */
export class EvaluationVersionConflictError extends EvaluationStoreError {
  constructor(
    readonly evaluationId: string,
    readonly expectedVersion: string,
  ) {
    super('CONFLICT', `evaluation '${evaluationId}' changed since version ${expectedVersion}`, {
      details: { evaluationId, expectedVersion },
      retryable: true,
    });
  }
}

export class InvalidEvaluationError extends EvaluationStoreError {
  constructor(
    readonly evaluationId: string | undefined,
    readonly issues: readonly ValidationIssue[],
  ) {
    const list = issues
      .slice(0, 5)
      .map((i) => `${i.path} ${i.message}`)
      .join('; ');
    super('INVALID_REQUEST', `evaluation is invalid: ${list}`, {
      details: { ...(evaluationId === undefined ? {} : { evaluationId }), issues },
    });
  }
}

/** The document to write, as plain JSON (undefined dropped); InvalidEvaluationError if broken. */
export function assertWritableEvaluation(
  input: RecommendationEvaluation,
): RecommendationEvaluation {
  const doc = JSON.parse(JSON.stringify(input)) as RecommendationEvaluation;
  const result = validate.recommendationEvaluation(doc);
  const id = typeof doc.evaluationId === 'string' ? doc.evaluationId : undefined;
  if (!result.ok) throw new InvalidEvaluationError(id, result.issues);
  return doc;
}

/** The stored evaluation with `changes` applied and updatedAt stamped, checked. */
export function changedEvaluation(
  stored: RecommendationEvaluation,
  changes: EvaluationChanges,
  now: Date,
): RecommendationEvaluation {
  return assertWritableEvaluation({
    ...stored,
    ...(changes.points === undefined ? {} : { points: changes.points }),
    ...(changes.cancelRequestedAt === undefined
      ? {}
      : { cancelRequestedAt: changes.cancelRequestedAt }),
    updatedAt: now.toISOString(),
  });
}

/** A stored evaluation, read leniently; broken ones → InvalidStoredDocumentError. */
export function readEvaluationDocument(id: string, data: unknown): RecommendationEvaluation {
  const result = validate.recommendationEvaluation(data);
  if (!result.ok) throw new InvalidStoredDocumentError('evaluations', id, result.issues);
  return result.value;
}
