import type { ErrorCode, FlowRun, RunStatus, StepStatus } from '@tda/contracts';
import { describeQueueEntry, type QueueEntry } from './admission';
import { ancestorsOf } from './dag';
import { StepNotFoundError } from './errors';
import type { DependencyState } from './executable';
import { isTerminalRunStatus, isTerminalStepStatus } from './run-status';
import { hasStep, stepOf } from './step-lookup';
import { isAtOrBefore, timestampMs } from './time';

export type BlockedReason =
  | { kind: 'step_terminal'; status: StepStatus; finishedAt?: string; errorCode?: ErrorCode }
  | { kind: 'run_not_running'; runStatus: RunStatus }
  | { kind: 'cancel_requested'; cancelRequestedAt: string }
  | { kind: 'deadline_passed'; deadlineAt: string }
  | { kind: 'unknown_dependency'; dependencies: string[] }
  | { kind: 'dependency_failed'; stepId: string; status: 'FAILED' | 'CANCELLED' }
  | { kind: 'dependency_skipped'; stepId: string }
  /**
   * Direct dependencies still in progress, and the frontier: the ancestors that are actually
   * doing (or about to do) work — READY/RUNNING, or PENDING with every dependency SUCCEEDED.
   */
  | {
      kind: 'waiting_for_dependencies';
      dependencies: DependencyState[];
      frontier: DependencyState[];
    }
  /** PENDING although every dependency SUCCEEDED: the orchestrator has not advanced the run yet. */
  | { kind: 'awaiting_advance' }
  /**
   * The run waits for admission (a PENDING run beyond the running-runs limits): its position in
   * the queue of all PENDING runs (creation order) and what it waits for.
   */
  | ({ kind: 'queued' } & Omit<QueueEntry, 'runId' | 'ownerId'>)
  | { kind: 'ready_not_claimed'; readySince?: string; waitingMs?: number }
  | {
      kind: 'running';
      attempt: number;
      leaseOwner?: string;
      leaseExpiresAt?: string;
      /** Lease expired (or missing) at `now`; false when no `now` was given. */
      expired: boolean;
    };

export interface BlockedOnExplanation {
  runId: string;
  runStatus: RunStatus;
  stepId: string;
  status: StepStatus;
  reasons: BlockedReason[];
  /** One line for humans (CLI, admin UI, logs). */
  summary: string;
}

function describe(reason: BlockedReason): string {
  switch (reason.kind) {
    case 'step_terminal':
      return `it finished as ${reason.status}${reason.errorCode ? ` (${reason.errorCode})` : ''}`;
    case 'run_not_running':
      return `the run is ${reason.runStatus}`;
    case 'cancel_requested':
      return `cancel was requested at ${reason.cancelRequestedAt}`;
    case 'deadline_passed':
      return `the run deadline ${reason.deadlineAt} has passed`;
    case 'unknown_dependency':
      return `it depends on unknown steps ${reason.dependencies.join(', ')}`;
    case 'dependency_failed':
      return `dependency ${reason.stepId} is ${reason.status}`;
    case 'dependency_skipped':
      return `dependency ${reason.stepId} was SKIPPED`;
    case 'waiting_for_dependencies': {
      const deps = reason.dependencies.map((d) => `${d.stepId} (${d.status})`).join(', ');
      const frontier = reason.frontier.map((d) => `${d.stepId} (${d.status})`).join(', ');
      return `waiting for ${deps}${frontier && frontier !== deps ? `; active upstream: ${frontier}` : ''}`;
    }
    case 'awaiting_advance':
      return 'all dependencies SUCCEEDED; waiting for the orchestrator to mark it READY';
    case 'queued':
      return describeQueueEntry(reason);
    case 'ready_not_claimed':
      return `READY since ${reason.readySince ?? '(unknown)'}${reason.waitingMs !== undefined ? ` (${Math.round(reason.waitingMs / 1000)} s)` : ''}, not claimed by a worker yet`;
    case 'running':
      return `running attempt ${reason.attempt} by ${reason.leaseOwner ?? '(no lease)'}, lease until ${reason.leaseExpiresAt ?? '(none)'}${reason.expired ? ' (EXPIRED)' : ''}`;
  }
}

export interface BlockedOnOptions {
  /**
   * The run's place in the admission queue (the orchestrator computes it from the RUNNING and
   * PENDING runs, see admission.ts). Used only while the run is PENDING: the step then waits for
   * the run to be admitted, which replaces `awaiting_advance`.
   */
  queue?: QueueEntry;
}

/**
 * Why is this step not running (or not done)? A structured explanation for operators; throws
 * StepNotFoundError (code NOT_FOUND) for an unknown stepId. `now` enables the time-based reasons
 * (deadline passed, lease expired, time spent READY).
 */
export function blockedOn(
  run: FlowRun,
  stepId: string,
  now?: Date,
  options: BlockedOnOptions = {},
): BlockedOnExplanation {
  const step = stepOf(run, stepId);
  if (step === undefined) throw new StepNotFoundError(run.runId, stepId);
  const reasons: BlockedReason[] = [];

  if (isTerminalStepStatus(step.status)) {
    const terminal: BlockedReason = { kind: 'step_terminal', status: step.status };
    if (step.finishedAt !== undefined) terminal.finishedAt = step.finishedAt;
    if (step.error !== undefined) terminal.errorCode = step.error.code;
    reasons.push(terminal);
  } else {
    if (isTerminalRunStatus(run.status))
      reasons.push({ kind: 'run_not_running', runStatus: run.status });
    else {
      if (run.cancelRequestedAt !== undefined) {
        reasons.push({ kind: 'cancel_requested', cancelRequestedAt: run.cancelRequestedAt });
      }
      if (now !== undefined && run.deadlineAt !== undefined && isAtOrBefore(run.deadlineAt, now)) {
        reasons.push({ kind: 'deadline_passed', deadlineAt: run.deadlineAt });
      }
    }
    const queued = queuedReason(run, options.queue);
    if (queued !== undefined) reasons.push(queued);
    reasons.push(
      ...stepReasons(run, stepId, now).filter(
        (r) => queued === undefined || r.kind !== 'awaiting_advance',
      ),
    );
  }

  const summary = `${stepId} is ${step.status}: ${reasons.map(describe).join('; ')}`;
  return { runId: run.runId, runStatus: run.status, stepId, status: step.status, reasons, summary };
}

function queuedReason(run: FlowRun, entry: QueueEntry | undefined): BlockedReason | undefined {
  if (entry === undefined || run.status !== 'PENDING' || entry.runId !== run.runId)
    return undefined;
  const { runId: _runId, ownerId: _ownerId, ...position } = entry;
  return { kind: 'queued', ...position };
}

function stepReasons(run: FlowRun, stepId: string, now: Date | undefined): BlockedReason[] {
  const step = stepOf(run, stepId);
  if (step === undefined) return [];
  switch (step.status) {
    case 'PENDING':
      return pendingReasons(run, stepId);
    case 'READY': {
      if (run.status !== 'RUNNING') {
        return isTerminalRunStatus(run.status)
          ? []
          : [{ kind: 'run_not_running', runStatus: run.status }];
      }
      const ready: BlockedReason = { kind: 'ready_not_claimed' };
      if (step.readyAt !== undefined) ready.readySince = step.readyAt;
      const readyMs = timestampMs(step.readyAt);
      if (now !== undefined && readyMs !== undefined)
        ready.waitingMs = Math.max(0, now.getTime() - readyMs);
      return [ready];
    }
    case 'RUNNING': {
      const running: BlockedReason = {
        kind: 'running',
        attempt: step.attempt,
        expired:
          now !== undefined &&
          (step.lease === undefined || isAtOrBefore(step.lease.expiresAt, now)),
      };
      if (step.lease !== undefined) {
        running.leaseOwner = step.lease.owner;
        running.leaseExpiresAt = step.lease.expiresAt;
      }
      return [running];
    }
    default:
      return [];
  }
}

function pendingReasons(run: FlowRun, stepId: string): BlockedReason[] {
  const step = stepOf(run, stepId);
  if (step === undefined) return [];
  const reasons: BlockedReason[] = [];
  const unknown = step.dependsOn.filter((d) => !hasStep(run, d));
  if (unknown.length > 0) reasons.push({ kind: 'unknown_dependency', dependencies: unknown });
  const waiting: DependencyState[] = [];
  for (const dep of [...step.dependsOn].sort()) {
    const status = stepOf(run, dep)?.status;
    if (status === undefined || status === 'SUCCEEDED') continue;
    if (status === 'FAILED' || status === 'CANCELLED') {
      reasons.push({ kind: 'dependency_failed', stepId: dep, status });
    } else if (status === 'SKIPPED') reasons.push({ kind: 'dependency_skipped', stepId: dep });
    else waiting.push({ stepId: dep, status });
  }
  if (waiting.length > 0) {
    const frontier = [...ancestorsOf(run.steps, stepId)].sort().flatMap((id): DependencyState[] => {
      const ancestor = stepOf(run, id);
      if (ancestor === undefined) return [];
      const active =
        ancestor.status === 'READY' ||
        ancestor.status === 'RUNNING' ||
        (ancestor.status === 'PENDING' &&
          ancestor.dependsOn.every((d) => stepOf(run, d)?.status === 'SUCCEEDED'));
      return active ? [{ stepId: id, status: ancestor.status }] : [];
    });
    reasons.push({ kind: 'waiting_for_dependencies', dependencies: waiting, frontier });
  }
  if (reasons.length === 0 && !isTerminalRunStatus(run.status))
    reasons.push({ kind: 'awaiting_advance' });
  return reasons;
}
