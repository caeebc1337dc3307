import type { ErrorInfo, FlowRun, RunStatus, StepProgress, StepStatus } from '@tda/contracts';
import { assertWorkerIdentity } from './claim';
import { errorInfo, InvalidRequestError } from './errors';
import { isStorageSafeStepId } from './ids';
import { FIELD_DELETE, stepPath, type RunPatch } from './patch';
import { isTerminalRunStatus } from './run-status';
import { stepOf } from './step-lookup';
import { addMs, isAtOrBefore, toTimestamp } from './time';

export interface HeartbeatOptions {
  now: Date;
  owner: string;
  leaseMs: number;
  /** Coalesced progress of a long step (seed 003); updatedAt is set to now. */
  progress?: Omit<StepProgress, 'updatedAt'>;
}

export type HeartbeatDecision =
  /** Write the patch (lease.expiresAt, progress) conditionally and keep working. */
  | { kind: 'extend'; stepId: string; patch: RunPatch; leaseExpiresAt: string }
  /** Stop at once and write nothing more: the step is not ours any more (seed 003 fail-fast). */
  | {
      kind: 'lease_lost';
      stepId: string;
      reason: 'unknown_step' | 'not_running' | 'owner_mismatch';
      status?: StepStatus;
      leaseOwner?: string;
    }
  /**
   * Stop cooperatively and finalize CANCELLED: the run was cancelled, already ended (another
   * step failed) or passed its deadline, so this step's result can no longer be used.
   */
  | {
      kind: 'cancel_requested';
      stepId: string;
      cause: 'cancel_requested' | 'run_finished' | 'deadline_passed';
      runStatus: RunStatus;
    }
  | { kind: 'invalid'; stepId: string; error: ErrorInfo };

/** A worker's periodic check-in while it executes a step (DESIGN §2 lease, seed 003 heartbeat). */
export function decideHeartbeat(
  run: FlowRun,
  stepId: string,
  options: HeartbeatOptions,
): HeartbeatDecision {
  assertWorkerIdentity(options.owner, options.leaseMs);
  const ts = toTimestamp(options.now);
  if (!isStorageSafeStepId(stepId)) {
    return {
      kind: 'invalid',
      stepId,
      error: errorInfo('FLOW_RUN_INVALID', `stepId '${stepId}' is not storage-safe`, { stepId }),
    };
  }
  const step = stepOf(run, stepId);
  if (step === undefined) return { kind: 'lease_lost', stepId, reason: 'unknown_step' };
  if (step.status !== 'RUNNING') {
    return { kind: 'lease_lost', stepId, reason: 'not_running', status: step.status };
  }
  if (step.lease?.owner !== options.owner) {
    const lost: HeartbeatDecision = { kind: 'lease_lost', stepId, reason: 'owner_mismatch' };
    if (step.lease !== undefined) lost.leaseOwner = step.lease.owner;
    return lost;
  }
  if (run.cancelRequestedAt !== undefined || run.status === 'CANCELLED') {
    return { kind: 'cancel_requested', stepId, cause: 'cancel_requested', runStatus: run.status };
  }
  if (isTerminalRunStatus(run.status)) {
    return { kind: 'cancel_requested', stepId, cause: 'run_finished', runStatus: run.status };
  }
  if (isAtOrBefore(run.deadlineAt, options.now)) {
    return { kind: 'cancel_requested', stepId, cause: 'deadline_passed', runStatus: run.status };
  }
  const leaseExpiresAt = addMs(options.now, options.leaseMs);
  const patch: Record<string, unknown> = { [stepPath(stepId, 'lease.expiresAt')]: leaseExpiresAt };
  if (options.progress !== undefined) {
    patch[stepPath(stepId, 'progress')] = { ...options.progress, updatedAt: ts };
  }
  return { kind: 'extend', stepId, patch, leaseExpiresAt };
}

export interface LeaseExpiryOptions {
  now: Date;
  /** Claims allowed per step (seed 004: 3). A step whose lease expires on its last claim fails. */
  maxAttempts: number;
}

export type LeaseExpiryDecision =
  | { kind: 'none'; stepId: string; reason: 'unknown_step' | 'not_running' | 'lease_valid' }
  /** RUNNING -> READY: republish a step-ready message after writing the patch. */
  | { kind: 'reclaim'; stepId: string; patch: RunPatch; attempt: number }
  /** RUNNING -> FAILED (LEASE_EXPIRED); advance then applies the failure policy. */
  | { kind: 'fail'; stepId: string; patch: RunPatch; error: ErrorInfo }
  /** The run already ended: close the abandoned step as CANCELLED. */
  | { kind: 'cancel'; stepId: string; patch: RunPatch; error: ErrorInfo };

/**
 * The reconciler's decision for a RUNNING step (DESIGN §5.4): when its lease has expired (or it
 * has none) the worker is presumed dead. Reclaimable while attempt < maxAttempts (back to READY,
 * readyAt = now, error LEASE_EXPIRED recorded until the next claim clears it), else FAILED with
 * LEASE_EXPIRED. In a finished or cancel-requested run the step is CANCELLED instead.
 */
export function decideLeaseExpiry(
  run: FlowRun,
  stepId: string,
  options: LeaseExpiryOptions,
): LeaseExpiryDecision {
  if (!Number.isInteger(options.maxAttempts) || options.maxAttempts < 1) {
    throw new InvalidRequestError('maxAttempts must be a positive integer', {
      maxAttempts: options.maxAttempts,
    });
  }
  const ts = toTimestamp(options.now);
  const step = isStorageSafeStepId(stepId) ? stepOf(run, stepId) : undefined;
  if (step === undefined) return { kind: 'none', stepId, reason: 'unknown_step' };
  if (step.status !== 'RUNNING') return { kind: 'none', stepId, reason: 'not_running' };
  if (step.lease !== undefined && !isAtOrBefore(step.lease.expiresAt, options.now)) {
    return { kind: 'none', stepId, reason: 'lease_valid' };
  }
  const details = {
    stepId,
    attempt: step.attempt,
    maxAttempts: options.maxAttempts,
    leaseOwner: step.lease?.owner ?? null,
    leaseExpiresAt: step.lease?.expiresAt ?? null,
  };
  const at = (field: string): string => stepPath(stepId, field);
  if (isTerminalRunStatus(run.status) || run.cancelRequestedAt !== undefined) {
    const error = errorInfo('CANCELLED', `step ${stepId} abandoned after the run ended`, details);
    return {
      kind: 'cancel',
      stepId,
      error,
      patch: {
        [at('status')]: 'CANCELLED',
        [at('finishedAt')]: ts,
        [at('lease')]: FIELD_DELETE,
        [at('error')]: error,
      },
    };
  }
  if (step.attempt >= options.maxAttempts) {
    const error = errorInfo(
      'LEASE_EXPIRED',
      `step ${stepId} lost its worker on attempt ${step.attempt} of ${options.maxAttempts}`,
      details,
    );
    return {
      kind: 'fail',
      stepId,
      error,
      patch: {
        [at('status')]: 'FAILED',
        [at('finishedAt')]: ts,
        [at('lease')]: FIELD_DELETE,
        [at('error')]: error,
      },
    };
  }
  const error = errorInfo('LEASE_EXPIRED', `step ${stepId} lost its worker; reclaimable`, details);
  return {
    kind: 'reclaim',
    stepId,
    attempt: step.attempt,
    patch: {
      [at('status')]: 'READY',
      [at('readyAt')]: ts,
      [at('lease')]: FIELD_DELETE,
      [at('error')]: error,
      // the next claim records its own deadline
      ...(step.deadlineAt === undefined ? {} : { [at('deadlineAt')]: FIELD_DELETE }),
    },
  };
}

export interface LeaseHolder {
  owner: string;
  /** The claim the holder made (steps.<id>.attempt when it claimed). */
  attempt: number;
  now: Date;
}

/**
 * Whether `holder` still holds the step's lease (seed 003: every write of a running job is
 * conditional on `(job, locked_by, lease_expires_at > now)`): the step is RUNNING under the same
 * claim and owner and its lease has not expired. The guard of a worker's writes beside the run
 * document (step checkpoints); a cancel request does not revoke it (the step stops at its next
 * batch boundary).
 */
export function holdsStepLease(run: FlowRun, stepId: string, holder: LeaseHolder): boolean {
  const step = stepOf(run, stepId);
  return (
    step !== undefined &&
    step.status === 'RUNNING' &&
    step.attempt === holder.attempt &&
    step.lease?.owner === holder.owner &&
    !isAtOrBefore(step.lease.expiresAt, holder.now)
  );
}
