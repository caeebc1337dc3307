import type { FlowRun, RunProgress, RunStatus, StepStatus } from '@tda/contracts';
import { currentStepOf } from './current-step';
import { isAtOrBefore } from './time';

export const TERMINAL_STEP_STATUSES: readonly StepStatus[] = [
  'SUCCEEDED',
  'FAILED',
  'SKIPPED',
  'CANCELLED',
];
export const TERMINAL_RUN_STATUSES: readonly RunStatus[] = ['SUCCEEDED', 'FAILED', 'CANCELLED'];

/** Terminal step states are absorbing: nothing in this library moves a step out of them. */
export function isTerminalStepStatus(status: StepStatus): boolean {
  return TERMINAL_STEP_STATUSES.includes(status);
}

/** Terminal run states are absorbing: advance never changes a terminal run's status. */
export function isTerminalRunStatus(status: RunStatus): boolean {
  return TERMINAL_RUN_STATUSES.includes(status);
}

/** The eight counters of RunProgress (DESIGN §2). */
export type ProgressCounters = Pick<
  RunProgress,
  'total' | 'pending' | 'ready' | 'running' | 'succeeded' | 'failed' | 'skipped' | 'cancelled'
>;

const COUNTER_BY_STATUS: Readonly<Record<StepStatus, keyof ProgressCounters>> = {
  PENDING: 'pending',
  READY: 'ready',
  RUNNING: 'running',
  SUCCEEDED: 'succeeded',
  FAILED: 'failed',
  SKIPPED: 'skipped',
  CANCELLED: 'cancelled',
};

/** Step counters by status for the run's current steps, and its current step (seed 004). */
export function computeProgress(run: Pick<FlowRun, 'steps'>): RunProgress {
  const statuses = new Map(Object.entries(run.steps).map(([id, s]) => [id, s.status]));
  const counters = progressOfStatuses(statuses.values());
  const currentStepId = currentStepOf(run, statuses);
  return currentStepId === undefined ? counters : { ...counters, currentStepId };
}

export function progressOfStatuses(statuses: Iterable<StepStatus>): ProgressCounters {
  const progress: ProgressCounters = {
    total: 0,
    pending: 0,
    ready: 0,
    running: 0,
    succeeded: 0,
    failed: 0,
    skipped: 0,
    cancelled: 0,
  };
  for (const status of statuses) {
    progress.total++;
    progress[COUNTER_BY_STATUS[status]]++;
  }
  return progress;
}

/** The eight counters and the current step (seed 004) are the same. */
export function sameProgress(a: Partial<RunProgress> | undefined, b: RunProgress): boolean {
  if (a === undefined || a.currentStepId !== b.currentStepId) return false;
  return (
    (Object.values(COUNTER_BY_STATUS) as (keyof ProgressCounters)[]).every(
      (key) => a[key] === b[key],
    ) && a.total === b.total
  );
}

/** Why a run reached (or would reach) a terminal status. */
export type TerminalCause =
  | { status: 'CANCELLED'; cause: 'cancel_requested' }
  | { status: 'FAILED'; cause: 'step_failed'; stepId: string }
  | { status: 'FAILED'; cause: 'deadline_passed' }
  | { status: 'CANCELLED'; cause: 'step_cancelled'; stepId: string }
  | { status: 'SUCCEEDED'; cause: 'all_steps_done' };

/**
 * The terminal outcome implied by the step statuses, or undefined while the run must go on.
 * Precedence (fixed, so that the decision is deterministic): an explicit cancel request; then a
 * FAILED step (lowest stepId; default failure policy, seed 000); then the run deadline; then a
 * CANCELLED step outside a run cancel (nothing downstream can run, so the run is cancelled);
 * then "every step SUCCEEDED or SKIPPED" -> SUCCEEDED.
 */
export function terminalCause(
  run: Pick<FlowRun, 'cancelRequestedAt' | 'deadlineAt'>,
  statuses: ReadonlyMap<string, StepStatus>,
  now?: Date,
): TerminalCause | undefined {
  if (run.cancelRequestedAt !== undefined)
    return { status: 'CANCELLED', cause: 'cancel_requested' };
  const ids = [...statuses.keys()].sort();
  const failed = ids.find((id) => statuses.get(id) === 'FAILED');
  if (failed !== undefined) return { status: 'FAILED', cause: 'step_failed', stepId: failed };
  if (now !== undefined && isAtOrBefore(run.deadlineAt, now)) {
    return { status: 'FAILED', cause: 'deadline_passed' };
  }
  const cancelled = ids.find((id) => statuses.get(id) === 'CANCELLED');
  if (cancelled !== undefined)
    return { status: 'CANCELLED', cause: 'step_cancelled', stepId: cancelled };
  if (
    ids.length > 0 &&
    ids.every((id) => {
      const s = statuses.get(id);
      return s === 'SUCCEEDED' || s === 'SKIPPED';
    })
  ) {
    return { status: 'SUCCEEDED', cause: 'all_steps_done' };
  }
  return undefined;
}

/**
 * Run status implied by the current document (seed 000 + DESIGN §2). A terminal run keeps its
 * status. Else a terminal cause wins (see terminalCause); else RUNNING once anything started (a
 * step left PENDING, or the run already RUNNING), PENDING before that. Pass `now` to take the run
 * deadline into account. A view for readers: advance() is what moves a run, and after it
 * deriveRunStatus agrees with the stored status.
 */
export function deriveRunStatus(run: FlowRun, now?: Date): RunStatus {
  if (isTerminalRunStatus(run.status)) return run.status;
  const statuses = new Map(Object.entries(run.steps).map(([id, s]) => [id, s.status] as const));
  const cause = terminalCause(run, statuses, now);
  if (cause !== undefined) return cause.status;
  const started = run.status === 'RUNNING' || [...statuses.values()].some((s) => s !== 'PENDING');
  return started ? 'RUNNING' : 'PENDING';
}
