import type { ErrorInfo, FlowRun, StepLease, StepType } from '@tda/contracts';
import { errorInfo, InvalidRequestError } from './errors';
import { isExecutable, type NotExecutableReason } from './executable';
import { FIELD_DELETE, stepPath, type RunPatch } from './patch';
import { stepOf } from './step-lookup';
import { assertMaxAttemptsOption } from './step-policy';
import { addMs, timestampMs, toTimestamp } from './time';

export interface ClaimOptions {
  now: Date;
  /** Worker identity written into the lease (e.g. `<service>/<instance>/<uuid>`). */
  owner: string;
  leaseMs: number;
  /** The stepType the worker serves; a mismatch is a no-op. */
  stepType?: StepType;
  /**
   * The worker's step timeout (StepPolicy.timeoutMs): recorded as `steps.<id>.deadlineAt` =
   * now + timeoutMs so the reconciler can fail a stuck attempt with STEP_TIMEOUT. Without it a
   * deadline left by an earlier attempt is removed.
   */
  timeoutMs?: number;
  /** The worker's StepPolicy.maxAttempts, recorded as `steps.<id>.maxAttempts` for the reconciler. */
  maxAttempts?: number;
}

export type ClaimNoopReason =
  | Exclude<NotExecutableReason, { kind: 'unsafe_step_id' } | { kind: 'unknown_dependency' }>
  | { kind: 'already_running'; leaseOwner?: string; attempt: number };

export type ClaimDecision =
  | {
      kind: 'claim';
      stepId: string;
      patch: RunPatch;
      /** step.attempt after the claim (1 for the first claim). */
      attempt: number;
      lease: StepLease;
      startedAt: string;
      /** The run's deadline (ms since epoch) when it has one: the worker stops its step there. */
      runDeadlineMs?: number;
      /**
       * The run was already past its deadline at the claim: its result could not be used (the
       * orchestrator fails the run RUN_TIMEOUT), so the worker finalizes the step CANCELLED
       * (cause deadline_passed) without doing any work.
       */
      runDeadlinePassed: boolean;
    }
  /** Nothing to write: ack the message (seed 002 scenario A). */
  | { kind: 'noop'; stepId: string; reason: ClaimNoopReason }
  /**
   * The run or step is broken. Unsafe stepId: FLOW_RUN_INVALID and no patch (the id cannot be
   * addressed). Unknown dependsOn: INVALID_STEP_INPUTS and a patch failing the step (seed 002).
   */
  | { kind: 'invalid'; stepId: string; error: ErrorInfo; patch?: RunPatch };

export function assertWorkerIdentity(owner: string, leaseMs?: number): void {
  if (owner.trim() === '' || owner.length > 200) {
    throw new InvalidRequestError('worker owner must be 1..200 characters', { owner });
  }
  if (leaseMs !== undefined && (!Number.isFinite(leaseMs) || leaseMs <= 0)) {
    throw new InvalidRequestError('leaseMs must be a positive number', { leaseMs });
  }
}

function assertClaimPolicy(options: Pick<ClaimOptions, 'timeoutMs' | 'maxAttempts'>): void {
  const { timeoutMs, maxAttempts } = options;
  if (timeoutMs !== undefined && (!Number.isFinite(timeoutMs) || timeoutMs <= 0)) {
    throw new InvalidRequestError('timeoutMs must be a positive number', { timeoutMs });
  }
  assertMaxAttemptsOption(maxAttempts);
}

/**
 * READY -> RUNNING for one step (seed 002 claim + DESIGN §2 lease): attempt + 1, a lease for
 * `owner` until now + leaseMs, outputs.execution.timing.startedAt = now, the worker's policy
 * (deadlineAt = now + timeoutMs, maxAttempts) when given, and any error, finishedAt or progress
 * of a previous attempt removed. Apply it with the read's update time as precondition;
 * on a precondition failure re-read and decide again.
 */
export function decideClaim(run: FlowRun, stepId: string, options: ClaimOptions): ClaimDecision {
  assertWorkerIdentity(options.owner, options.leaseMs);
  assertClaimPolicy(options);
  const ts = toTimestamp(options.now);
  const verdict = isExecutable(run, stepId, options.stepType);
  if (!verdict.executable) {
    const { reason } = verdict;
    switch (reason.kind) {
      case 'unsafe_step_id':
        return {
          kind: 'invalid',
          stepId,
          error: errorInfo('FLOW_RUN_INVALID', `stepId '${stepId}' is not storage-safe`, {
            stepId,
          }),
        };
      case 'unknown_dependency': {
        const error = errorInfo(
          'INVALID_STEP_INPUTS',
          `step ${stepId} depends on unknown steps: ${reason.dependencies.join(', ')}`,
          { stepId, unknownDependencies: reason.dependencies },
        );
        return {
          kind: 'invalid',
          stepId,
          error,
          patch: {
            [stepPath(stepId, 'status')]: 'FAILED',
            [stepPath(stepId, 'finishedAt')]: ts,
            [stepPath(stepId, 'error')]: error,
          },
        };
      }
      case 'not_ready': {
        const step = stepOf(run, stepId);
        if (reason.status === 'RUNNING' && step !== undefined) {
          const running: ClaimNoopReason = { kind: 'already_running', attempt: step.attempt };
          if (step.lease !== undefined) running.leaseOwner = step.lease.owner;
          return { kind: 'noop', stepId, reason: running };
        }
        return { kind: 'noop', stepId, reason };
      }
      default:
        return { kind: 'noop', stepId, reason };
    }
  }
  const { step } = verdict;
  const lease: StepLease = { owner: options.owner, expiresAt: addMs(options.now, options.leaseMs) };
  const attempt = step.attempt + 1;
  const patch: Record<string, unknown> = {
    [stepPath(stepId, 'status')]: 'RUNNING',
    [stepPath(stepId, 'attempt')]: attempt,
    [stepPath(stepId, 'lease')]: lease,
  };
  // A previous attempt's timing (finishedAt, durationMs) must not survive into this one.
  const timing = step.outputs.execution?.timing;
  const timingIsFresh = timing === undefined || Object.keys(timing).every((k) => k === 'startedAt');
  if (timingIsFresh) patch[stepPath(stepId, 'outputs.execution.timing.startedAt')] = ts;
  else patch[stepPath(stepId, 'outputs.execution.timing')] = { startedAt: ts };
  if (options.timeoutMs !== undefined) {
    patch[stepPath(stepId, 'deadlineAt')] = addMs(options.now, options.timeoutMs);
  } else if (step.deadlineAt !== undefined) {
    // An earlier attempt's deadline must not time out this one.
    patch[stepPath(stepId, 'deadlineAt')] = FIELD_DELETE;
  }
  if (options.maxAttempts !== undefined) {
    patch[stepPath(stepId, 'maxAttempts')] = options.maxAttempts;
  }
  if (step.error !== undefined) patch[stepPath(stepId, 'error')] = FIELD_DELETE;
  if (step.finishedAt !== undefined) patch[stepPath(stepId, 'finishedAt')] = FIELD_DELETE;
  if (step.progress !== undefined) patch[stepPath(stepId, 'progress')] = FIELD_DELETE;
  const runDeadlineMs = timestampMs(run.deadlineAt);
  return {
    kind: 'claim',
    stepId,
    patch,
    attempt,
    lease,
    startedAt: ts,
    ...(runDeadlineMs === undefined ? {} : { runDeadlineMs }),
    runDeadlinePassed: runDeadlineMs !== undefined && runDeadlineMs <= options.now.getTime(),
  };
}
