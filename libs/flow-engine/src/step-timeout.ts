import type { ErrorInfo, FlowRun } from '@tda/contracts';
import { errorInfo, InvalidRequestError } from './errors';
import { isStorageSafeStepId } from './ids';
import { FIELD_DELETE, stepPath, type RunPatch } from './patch';
import { isTerminalRunStatus } from './run-status';
import { stepOf } from './step-lookup';
import { timestampMs, toTimestamp } from './time';

/**
 * Default grace after `steps.<id>.deadlineAt` before the reconciler fails a step whose worker
 * still holds the lease: a healthy harness aborts its handler at the deadline and finalizes
 * STEP_TIMEOUT itself within a few writes; the reconciler is the backstop for a stuck one.
 */
export const STEP_TIMEOUT_GRACE_MS = 15_000;

export interface StepTimeoutOptions {
  now: Date;
  /** Wait this long past deadlineAt while the lease is still valid. Default STEP_TIMEOUT_GRACE_MS. */
  graceMs?: number;
}

export type StepTimeoutDecision =
  | {
      kind: 'none';
      stepId: string;
      reason:
        | 'unknown_step'
        | 'not_running'
        | 'no_deadline'
        | 'within_deadline'
        /** The lease ends by deadlineAt + grace: a dead worker, the lease rules decide. */
        | 'lease_expired_first';
    }
  /** RUNNING -> FAILED STEP_TIMEOUT; advance then applies the failure policy. */
  | { kind: 'timeout'; stepId: string; patch: RunPatch; error: ErrorInfo }
  /** The run already ended: close the overrunning step as CANCELLED. */
  | { kind: 'cancel'; stepId: string; patch: RunPatch; error: ErrorInfo };

/**
 * The reconciler's step-timeout decision for a RUNNING step (DESIGN §5.4 "past step timeout →
 * FAILED STEP_TIMEOUT"). The claim recorded `deadlineAt` = claim time + the worker's timeoutMs.
 *
 * STEP_TIMEOUT when now >= deadlineAt + grace and the lease reaches **past** deadlineAt + grace:
 * the attempt was kept alive (heartbeats) beyond its budget — a stuck worker whose own timer did
 * not stop it, or one that died only after overrunning. Its next heartbeat, if any, finds the
 * step no longer RUNNING and it writes nothing more. A lease that ends by deadlineAt + grace (or
 * no lease) is a worker that died within its budget: none here, the lease rules (reclaim while
 * attempt < maxAttempts, else LEASE_EXPIRED) decide once it has expired.
 *
 * In a finished or cancel-requested run the step is CANCELLED instead. Once now is past both the
 * deadline + grace and the lease, the answer no longer depends on when the reconciler looks.
 */
export function decideStepTimeout(
  run: FlowRun,
  stepId: string,
  options: StepTimeoutOptions,
): StepTimeoutDecision {
  const graceMs = options.graceMs ?? STEP_TIMEOUT_GRACE_MS;
  if (!Number.isFinite(graceMs) || graceMs < 0) {
    throw new InvalidRequestError('graceMs must be a non-negative number', { graceMs });
  }
  const ts = toTimestamp(options.now);
  const nowMs = options.now.getTime();
  const step = isStorageSafeStepId(stepId) ? stepOf(run, stepId) : undefined;
  if (step === undefined) return { kind: 'none', stepId, reason: 'unknown_step' };
  if (step.status !== 'RUNNING') return { kind: 'none', stepId, reason: 'not_running' };
  const deadlineMs = timestampMs(step.deadlineAt);
  if (deadlineMs === undefined) return { kind: 'none', stepId, reason: 'no_deadline' };
  const leaseMs = timestampMs(step.lease?.expiresAt);
  const cutoffMs = deadlineMs + graceMs;
  if (leaseMs === undefined || leaseMs <= cutoffMs) {
    return { kind: 'none', stepId, reason: 'lease_expired_first' };
  }
  if (nowMs < cutoffMs) return { kind: 'none', stepId, reason: 'within_deadline' };
  const details = {
    stepId,
    attempt: step.attempt,
    deadlineAt: step.deadlineAt,
    graceMs,
    leaseOwner: step.lease?.owner ?? null,
    leaseExpiresAt: step.lease?.expiresAt ?? null,
  };
  const at = (field: string): string => stepPath(stepId, field);
  const closing = (status: 'FAILED' | 'CANCELLED', error: ErrorInfo): RunPatch => ({
    [at('status')]: status,
    [at('finishedAt')]: ts,
    [at('lease')]: FIELD_DELETE,
    [at('error')]: error,
  });
  if (isTerminalRunStatus(run.status) || run.cancelRequestedAt !== undefined) {
    const error = errorInfo('CANCELLED', `step ${stepId} abandoned after the run ended`, details);
    return { kind: 'cancel', stepId, error, patch: closing('CANCELLED', error) };
  }
  const error = errorInfo(
    'STEP_TIMEOUT',
    `step ${stepId} passed its deadline ${String(step.deadlineAt)} (attempt ${step.attempt}) without finishing`,
    details,
  );
  return { kind: 'timeout', stepId, error, patch: closing('FAILED', error) };
}
