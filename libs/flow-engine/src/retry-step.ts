import type { ErrorInfo, FlowRun, FlowStep, RunStatus, StepStatus } from '@tda/contracts';
import { withAdvance, type AdvanceResult } from './advance';
import { isStorageSafeStepId } from './ids';
import { FIELD_DELETE, sortedSteps, stepPatch, type RunPatch } from './patch';
import { isTerminalRunStatus } from './run-status';
import { hasStep, stepOf } from './step-lookup';
import { addMs, timestampMs, toTimestamp } from './time';

/**
 * One earlier life of a step, kept in `steps.<id>.retryHistory` when a retry re-opens it: the
 * retry resets `attempt` to 0 (so the step gets its policy's full maxAttempts again instead of
 * failing on its first expired lease), and this is where the previous attempts stay visible.
 */
export interface StepRetryRecord {
  retriedAt: string;
  /**
   * FAILED (the retried step), CANCELLED (re-opened because the run had failed) or RUNNING (an
   * abandoned attempt: its lease had expired).
   */
  status: StepStatus;
  /** Claims the step had used. */
  attempt: number;
  error?: ErrorInfo;
  finishedAt?: string;
  /** The primary artifact the failed attempt left, if any. */
  gcs_uri?: string;
}

/** One retry of a run, kept in the run's `retryHistory`. */
export interface RunRetryRecord {
  retriedAt: string;
  stepIds: string[];
  reopened: string[];
  /** The run's error and finish time before the retry. */
  error?: ErrorInfo;
  finishedAt?: string;
}

export type RetryConflict =
  /** A cancelled run never restarts (DESIGN §5.5). */
  | { kind: 'run_cancelled'; runStatus: RunStatus }
  /** The step is not FAILED (and was not retried already while the run goes on). */
  | { kind: 'step_not_failed'; stepId: string; status: StepStatus; failedStepIds: string[] }
  /** Retry only restarts a FAILED run; a FAILED step in a live run is about to fail it. */
  | { kind: 'run_not_failed'; runStatus: RunStatus }
  /** Re-opening only some failed steps would fail the run again at once. */
  | { kind: 'other_failed_steps'; stepIds: string[] }
  /**
   * Steps of the failed run still RUNNING under a live lease: their workers stop at their next
   * heartbeat (the run ended) and finalize CANCELLED — in a restarted run that would cancel it.
   * Retry once they have finished (or their lease expired).
   */
  | { kind: 'steps_running'; stepIds: string[] }
  /** The advance after the retry ends the run again (e.g. an invalid graph). */
  | { kind: 'would_fail_again'; runStatus: RunStatus; runError?: ErrorInfo };

export type RetryDecision =
  | {
      kind: 'retry';
      /** Reset + the advance it implies: one conditional write. */
      patch: RunPatch;
      /** The FAILED steps retried (lexicographic). */
      retried: string[];
      /** CANCELLED steps re-opened to PENDING. */
      reopened: string[];
      /** Publish step-ready for `advance.newlyReady` after writing. */
      advance: AdvanceResult;
    }
  /**
   * Idempotence (a double click, a retried request): every step asked for is no longer FAILED
   * because an earlier retry re-opened it and the run is live again. Nothing to write.
   */
  | { kind: 'already_retried'; stepIds: string[] }
  | { kind: 'not_found'; stepIds: string[] }
  | { kind: 'conflict'; conflict: RetryConflict; message: string };

export interface RetryOptions {
  now: Date;
}

/** Every FAILED step of the run, lexicographic. */
export function failedStepIds(run: FlowRun): string[] {
  return sortedSteps(run)
    .filter(([, step]) => step.status === 'FAILED')
    .map(([id]) => id);
}

function retryHistoryOf(step: FlowStep): StepRetryRecord[] {
  const history = step['retryHistory'];
  return Array.isArray(history) ? (structuredClone(history) as StepRetryRecord[]) : [];
}

function runRetryHistoryOf(run: FlowRun): RunRetryRecord[] {
  const history = run['retryHistory'];
  return Array.isArray(history) ? (structuredClone(history) as RunRetryRecord[]) : [];
}

/** The fields of a step re-opened to PENDING: a fresh step with its history appended. */
function reopenStep(step: FlowStep, retriedAt: string): RunPatch {
  const record: StepRetryRecord = { retriedAt, status: step.status, attempt: step.attempt };
  if (step.error !== undefined) record.error = structuredClone(step.error);
  if (step.finishedAt !== undefined) record.finishedAt = step.finishedAt;
  if (typeof step.outputs.gcs_uri === 'string') record.gcs_uri = step.outputs.gcs_uri;
  const fields: Record<string, unknown> = {
    status: 'PENDING',
    attempt: 0,
    outputs: {},
    retryHistory: [...retryHistoryOf(step), record],
  };
  for (const field of ['error', 'finishedAt', 'readyAt', 'lease', 'progress', 'deadlineAt']) {
    if (step[field] !== undefined) fields[field] = FIELD_DELETE;
  }
  return fields;
}

/**
 * Retry of FAILED steps of a FAILED run (issue 5 recovery): each retried step and every CANCELLED
 * step goes back to PENDING with `attempt` 0, empty outputs and its previous life appended to
 * `retryHistory`; the run goes back to RUNNING (error and finishedAt removed, a `deadlineAt`
 * renewed for the same length as the original window, the retry appended to the run's
 * `retryHistory`); then the advance makes the re-opened steps READY where their dependencies
 * SUCCEEDED — one patch, one conditional write.
 *
 * Steps still RUNNING under a live lease make it a `steps_running` conflict (retry once their
 * workers have stopped); RUNNING steps whose lease expired are abandoned and re-opened too.
 *
 * Why every CANCELLED step: in a FAILED run (no cancel requested) a step is CANCELLED only
 * because the run failed — fail-fast cancels PENDING/READY steps on every branch, not only the
 * failed step's dependents, and steps still RUNNING finalize CANCELLED when they see the run
 * ended. Left CANCELLED they would end the retried run CANCELLED.
 *
 * `stepIds` = the steps to retry; every other FAILED step must be among them (otherwise the
 * advance would fail the run again at once: `other_failed_steps`). Refused: a cancelled run
 * (never restarts), a step that is not FAILED, a run that is not FAILED. Idempotent: when none
 * of the steps is FAILED any more because a retry already re-opened them and the run is live,
 * the answer is `already_retried` with nothing to write.
 */
export function decideRetry(
  run: FlowRun,
  stepIds: readonly string[],
  options: RetryOptions,
): RetryDecision {
  const requested = [...new Set(stepIds)].sort();
  const refused = refuseRetry(run, requested) ?? refuseWhileRunning(run, options.now);
  if (refused !== undefined) return refused;
  const { patch, reopened } = retryPatch(run, requested, options.now);
  const combined = withAdvance(run, patch, options.now);
  if (isTerminalRunStatus(combined.advance.runStatus)) {
    const { runStatus, runError } = combined.advance;
    return conflict(
      { kind: 'would_fail_again', runStatus, ...(runError === undefined ? {} : { runError }) },
      `retrying would end run ${run.runId} ${runStatus} again${runError === undefined ? '' : `: ${runError.message}`}`,
    );
  }
  return {
    kind: 'retry',
    patch: combined.patch,
    retried: requested,
    reopened,
    advance: combined.advance,
  };
}

/** Why the requested steps cannot be retried, from the document alone; undefined when they can. */
function refuseRetry(run: FlowRun, requested: readonly string[]): RetryDecision | undefined {
  const missing = requested.filter((id) => !isStorageSafeStepId(id) || !hasStep(run, id));
  if (missing.length > 0) return { kind: 'not_found', stepIds: missing };
  if (run.cancelRequestedAt !== undefined || run.status === 'CANCELLED') {
    return conflict(
      { kind: 'run_cancelled', runStatus: run.status },
      `run ${run.runId} was cancelled; a cancelled run never restarts (rerun it instead)`,
    );
  }
  const failed = failedStepIds(run);
  const notFailed = requested.filter((id) => stepOf(run, id)?.status !== 'FAILED');
  if (notFailed.length > 0) return refuseNotFailed(run, requested, notFailed, failed);
  if (run.status !== 'FAILED') {
    return conflict(
      { kind: 'run_not_failed', runStatus: run.status },
      `run ${run.runId} is ${run.status}; retry restarts FAILED runs only (try again once it ended)`,
    );
  }
  const others = failed.filter((id) => !requested.includes(id));
  if (others.length === 0) return undefined;
  return conflict(
    { kind: 'other_failed_steps', stepIds: others },
    `run ${run.runId} has other FAILED steps (${others.join(', ')}); retry them together`,
  );
}

/** Requested steps that are not FAILED: a repeated retry (already done) or a conflict. */
function refuseNotFailed(
  run: FlowRun,
  requested: readonly string[],
  notFailed: readonly string[],
  failed: string[],
): RetryDecision {
  const retriedBefore = notFailed.every((id) => {
    const step = stepOf(run, id);
    return step !== undefined && retryHistoryOf(step).length > 0;
  });
  if (retriedBefore && run.status !== 'FAILED' && notFailed.length === requested.length) {
    return { kind: 'already_retried', stepIds: [...requested] };
  }
  const [first = ''] = notFailed;
  const status = stepOf(run, first)?.status ?? 'PENDING';
  return conflict(
    { kind: 'step_not_failed', stepId: first, status, failedStepIds: failed },
    `step ${first} is ${status}, not FAILED; only a FAILED step can be retried`,
  );
}

/** Steps still RUNNING under a live lease: their workers have not stopped yet. */
function refuseWhileRunning(run: FlowRun, now: Date): RetryDecision | undefined {
  const nowMs = now.getTime();
  const live = sortedSteps(run)
    .filter(([, step]) => step.status === 'RUNNING')
    .filter(([, step]) => {
      const expires = timestampMs(step.lease?.expiresAt);
      return expires !== undefined && expires > nowMs;
    })
    .map(([id]) => id);
  if (live.length === 0) return undefined;
  return conflict(
    { kind: 'steps_running', stepIds: live },
    `steps of run ${run.runId} are still running (${live.join(', ')}); their workers stop at their next heartbeat, retry once they have`,
  );
}

/** The retry write before the advance: re-opened steps, the run RUNNING again, its history. */
function retryPatch(
  run: FlowRun,
  requested: readonly string[],
  nowDate: Date,
): { patch: Record<string, unknown>; reopened: string[] } {
  const now = toTimestamp(nowDate);
  const patch: Record<string, unknown> = {};
  const reopened: string[] = [];
  for (const [id, step] of sortedSteps(run)) {
    const retried = requested.includes(id);
    // RUNNING here means abandoned (no live lease, checked before): its worker is gone, and
    // should it come back, its next conditional write finds the lease gone and it stops.
    if (!retried && step.status !== 'CANCELLED' && step.status !== 'RUNNING') continue;
    Object.assign(patch, stepPatch(id, reopenStep(step, now)));
    if (!retried) reopened.push(id);
  }
  const record: RunRetryRecord = { retriedAt: now, stepIds: [...requested], reopened };
  if (run.error !== undefined) record.error = structuredClone(run.error);
  if (run.finishedAt !== undefined) record.finishedAt = run.finishedAt;
  patch['status'] = 'RUNNING';
  patch['retryHistory'] = [...runRetryHistoryOf(run), record];
  if (run.error !== undefined) patch['error'] = FIELD_DELETE;
  if (run.finishedAt !== undefined) patch['finishedAt'] = FIELD_DELETE;
  const deadlineAt = renewedDeadline(run, nowDate);
  if (deadlineAt !== undefined) patch['deadlineAt'] = deadlineAt;
  return { patch, reopened };
}

/**
 * The length of the run's deadline window as triggered (`deadlineSeconds`, or the default then):
 * deadlineAt - createdAt, or for a retried run deadlineAt - the latest `retriedAt` (each retry
 * renews the deadline for that same length from the retry). Undefined without a (usable) deadline.
 */
export function runDeadlineWindowMs(run: FlowRun): number | undefined {
  const deadline = timestampMs(run.deadlineAt);
  const latestRetry = runRetryHistoryOf(run).at(-1)?.retriedAt;
  const start = timestampMs(latestRetry ?? run.createdAt);
  if (deadline === undefined || start === undefined || deadline <= start) return undefined;
  return deadline - start;
}

/**
 * A run deadline as long as the original one (runDeadlineWindowMs), counted from the retry:
 * the retry is a new execution, and a run that failed by RUN_TIMEOUT would otherwise time out
 * again at once. Undefined when the run has no (usable) deadline.
 */
export function renewedDeadline(run: FlowRun, now: Date): string | undefined {
  const window = runDeadlineWindowMs(run);
  return window === undefined ? undefined : addMs(now, window);
}

function conflict(reason: RetryConflict, message: string): RetryDecision {
  return { kind: 'conflict', conflict: reason, message };
}
