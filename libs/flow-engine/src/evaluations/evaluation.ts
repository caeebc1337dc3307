import { createHash } from 'node:crypto';
import type { RecommendationEvaluation, RunStatus } from '@tda/contracts';
import type { RandomSource } from '../ids';
import { isTerminalRunStatus } from '../run-status';

/** contracts/recommendation_evaluation.schema.json EvaluationId. */
export const EVALUATION_ID_PATTERN = /^evl_[a-z0-9]{20}$/;
/** run.trigger.source of an evaluation's runs: `evaluation:<evaluationId>`. */
export const EVALUATION_TRIGGER_PREFIX = 'evaluation:';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/**
 * The id of a new evaluation: derived from (owner, idempotency key) when there is one, so a
 * retried POST lands on the same document and the same runs; else 20 random [a-z0-9].
 */
export function evaluationIdFor(
  ownerId: string,
  idempotencyKey: string | undefined,
  random: RandomSource,
): string {
  if (idempotencyKey !== undefined) {
    const digest = createHash('sha256')
      .update(`evaluation\u0000${ownerId}\u0000${idempotencyKey}`)
      .digest('hex');
    return `evl_${digest.slice(0, 20)}`;
  }
  let id = 'evl_';
  for (let i = 0; i < 20; i += 1) {
    id += ALPHABET.charAt(Math.min(ALPHABET.length - 1, Math.floor(random() * ALPHABET.length)));
  }
  return id;
}

/**
 * The idempotency key of a point's run (a repeated top-up finds the run instead of making a
 * second): `<evaluationId>:<YYYYMMDDTHHmmssZ>` (idempotency keys allow no '.').
 */
export function evaluationPointKey(evaluationId: string, asOf: string): string {
  const compact = new Date(asOf)
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/[-:]/g, '');
  return `${evaluationId}:${compact}`;
}

/** The evaluation a run was triggered for, from its trigger source; undefined for other runs. */
export function evaluationIdOfSource(source: string): string | undefined {
  if (!source.startsWith(EVALUATION_TRIGGER_PREFIX)) return undefined;
  const id = source.slice(EVALUATION_TRIGGER_PREFIX.length);
  return EVALUATION_ID_PATTERN.test(id) ? id : undefined;
}

export type RunStatusOf = (runId: string) => RunStatus | undefined;

/** Points whose run exists and has not ended (an unknown run counts as active: never overfill). */
export function activePoints(evaluation: RecommendationEvaluation, statusOf: RunStatusOf): number {
  return evaluation.points.filter((p) => {
    if (p.runId === undefined) return false;
    const status = statusOf(p.runId);
    return status === undefined || !isTerminalRunStatus(status);
  }).length;
}

/**
 * Which points to trigger now: the earliest points without a run or an error, as many as the
 * window has room for; none once a cancel was requested.
 */
export function decideTopUp(evaluation: RecommendationEvaluation, statusOf: RunStatusOf): string[] {
  if (evaluation.cancelRequestedAt !== undefined) return [];
  const room = evaluation.window - activePoints(evaluation, statusOf);
  if (room <= 0) return [];
  return evaluation.points
    .filter((p) => p.runId === undefined && p.error === undefined)
    .slice(0, room)
    .map((p) => p.asOf);
}

/** running until every point has an ended run (or was refused); cancelled after a cancel. */
export function evaluationState(
  evaluation: RecommendationEvaluation,
  statusOf: RunStatusOf,
): 'running' | 'completed' | 'cancelled' {
  const active = activePoints(evaluation, statusOf);
  const cancelled = evaluation.cancelRequestedAt !== undefined;
  if (cancelled) return active === 0 ? 'cancelled' : 'running';
  const open = evaluation.points.some((p) => p.runId === undefined && p.error === undefined);
  return open || active > 0 ? 'running' : 'completed';
}
