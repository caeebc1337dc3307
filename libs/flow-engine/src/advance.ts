import type { ErrorInfo, FlowRun, RunProgress, RunStatus, StepStatus } from '@tda/contracts';
import { currentStepOf } from './current-step';
import { describeGraphIssue, type GraphIssue } from './dag';
import { expandRequestedSteps } from './dynamic/expand-run';
import { analyseGraph } from './graph-analysis';
import { isStorageSafeStepId } from './ids';
import { applyPatch, mergePatches, sortedSteps, stepPath, type RunPatch } from './patch';
import {
  isTerminalRunStatus,
  progressOfStatuses,
  sameProgress,
  terminalCause,
  type ProgressCounters,
  type TerminalCause,
} from './run-status';
import { stepOf } from './step-lookup';
import { toTimestamp } from './time';

/** Why advance ended a run: a terminal cause of the step statuses, or an unusable graph. */
export type RunTermination =
  | TerminalCause
  | { status: 'FAILED'; cause: 'invalid_graph'; issue: GraphIssue; issueCount: number }
  /** Flow 5: a step's indicator request is outside the catalogue or the run's bounds. */
  | { status: 'FAILED'; cause: 'expansion_refused'; stepId: string; error: ErrorInfo };

type ExpansionRefusal = Extract<RunTermination, { cause: 'expansion_refused' }>;

type UnsuccessfulTermination = Exclude<RunTermination, { status: 'SUCCEEDED' }>;

export interface AdvanceResult {
  /** Minimal: empty when there is nothing to do (a duplicate event, an already-advanced run). */
  patch: RunPatch;
  previousRunStatus: RunStatus;
  runStatus: RunStatus;
  /** PENDING -> READY in this advance, lexicographic; publish a step-ready message for each. */
  newlyReady: string[];
  /** PENDING -> SKIPPED because a dependency was SKIPPED. */
  newlySkipped: string[];
  /** PENDING/READY -> CANCELLED because the run ended. */
  newlyCancelled: string[];
  /** Dynamic steps inserted by this advance (flow 5), lexicographic. */
  newlyAdded: string[];
  /** Counters after the patch. */
  progress: RunProgress;
  /** Set when the run became terminal in this advance. */
  termination?: RunTermination;
  /** The run-level error written by this advance, if any. */
  runError?: ErrorInfo;
}

/**
 * The orchestrator's single decision (DESIGN §5.2): given the current run document and `now`,
 * the minimal patch that moves it forward. Rules, in order:
 *
 * - flow 5 first: a SUCCEEDED step's indicator request inserts its dynamic steps (then the rules
 *   below apply to the grown run), or fails the run with the refusal's code (outside the
 *   catalogue: INVALID_STRUCTURED_OUTPUT; over the run's bounds: EXPANSION_LIMIT_EXCEEDED);
 * - a terminal run keeps its status and steps (absorbing); the only thing ever written for it is
 *   a stale `progress` (e.g. a RUNNING step finalized CANCELLED after the run was cancelled);
 * - `cancelRequestedAt` -> run CANCELLED, PENDING/READY steps CANCELLED; RUNNING steps are left
 *   to their workers, who see the cancel on their next heartbeat;
 * - an invalid graph (unknown/self dependency, cycle, unsafe stepId, timeframe mismatch) -> run
 *   FAILED with FLOW_RUN_INVALID (otherwise the run would wait forever);
 * - a PENDING step with a SKIPPED dependency becomes SKIPPED (cascading): a dependency is
 *   satisfied only by SUCCEEDED (seed 002), and a skipped branch stays skipped;
 * - a FAILED step -> run FAILED (default policy, seed 000), PENDING/READY steps CANCELLED;
 *   the run deadline passed -> run FAILED with RUN_TIMEOUT, same cancellation; a CANCELLED step
 *   outside a run cancel -> run CANCELLED;
 * - every step SUCCEEDED/SKIPPED -> run SUCCEEDED;
 * - otherwise PENDING -> READY (readyAt = now) for steps whose dependencies all SUCCEEDED, and
 *   the run goes PENDING -> RUNNING (startedAt = now) once anything has started.
 *
 * `progress` (counters and seed 004's currentStepId) is written only when it changed; `updatedAt`
 * is the store's business.
 * Applying the patch and advancing again yields an empty patch (idempotent).
 */
export function advance(run: FlowRun, now: Date): AdvanceResult {
  const expansion = expandRequestedSteps(run, now);
  if (expansion.kind === 'refused') {
    const { stepId, error } = expansion;
    return advanceSteps(run, now, { status: 'FAILED', cause: 'expansion_refused', stepId, error });
  }
  if (expansion.kind === 'none') return advanceSteps(run, now);
  const next = advanceSteps(applyPatch(run, expansion.patch), now);
  return {
    ...next,
    patch: mergePatches(expansion.patch, next.patch),
    newlyAdded: [...expansion.added].sort(),
  };
}

/** advance() once the run's dynamic steps are in place (or their refusal decided). */
function advanceSteps(run: FlowRun, now: Date, refusal?: ExpansionRefusal): AdvanceResult {
  const ts = toTimestamp(now);
  const patch: Record<string, unknown> = {};
  const statuses = new Map<string, StepStatus>(sortedSteps(run).map(([id, s]) => [id, s.status]));
  const result: Omit<AdvanceResult, 'patch' | 'progress'> = {
    previousRunStatus: run.status,
    runStatus: run.status,
    newlyReady: [],
    newlySkipped: [],
    newlyCancelled: [],
    newlyAdded: [],
  };
  const finish = (): AdvanceResult => {
    const progress = withCurrentStep(progressOfStatuses(statuses.values()), run, statuses);
    if (!sameProgress(run.progress, progress)) patch['progress'] = progress;
    return { ...result, patch, progress };
  };

  if (isTerminalRunStatus(run.status)) return finish();

  const termination =
    refusal ??
    decideTermination(run, statuses, now, (id) => {
      statuses.set(id, 'SKIPPED');
      patch[stepPath(id, 'status')] = 'SKIPPED';
      patch[stepPath(id, 'finishedAt')] = ts;
      result.newlySkipped.push(id);
    });

  if (termination !== undefined) {
    result.termination = termination;
    result.runStatus = termination.status;
    patch['status'] = termination.status;
    patch['finishedAt'] = ts;
    if (termination.cause !== 'all_steps_done') {
      const runError = runErrorFor(run, termination);
      result.runError = runError;
      patch['error'] = runError;
      const stepError = cancelledStepError(termination);
      for (const [id, status] of statuses) {
        // unsafe ids cannot be addressed by a dotted path; the run error already names them
        if ((status !== 'PENDING' && status !== 'READY') || !isStorageSafeStepId(id)) continue;
        statuses.set(id, 'CANCELLED');
        patch[stepPath(id, 'status')] = 'CANCELLED';
        patch[stepPath(id, 'finishedAt')] = ts;
        patch[stepPath(id, 'error')] = stepError;
        result.newlyCancelled.push(id);
      }
    }
    return finish();
  }

  for (const [id, step] of sortedSteps(run)) {
    if (statuses.get(id) !== 'PENDING') continue;
    if (!step.dependsOn.every((dep) => statuses.get(dep) === 'SUCCEEDED')) continue;
    statuses.set(id, 'READY');
    patch[stepPath(id, 'status')] = 'READY';
    patch[stepPath(id, 'readyAt')] = ts;
    result.newlyReady.push(id);
  }
  const started = [...statuses.values()].some((s) => s !== 'PENDING');
  if (run.status === 'PENDING' && started) {
    result.runStatus = 'RUNNING';
    patch['status'] = 'RUNNING';
    patch['startedAt'] = ts;
  }
  return finish();
}

function decideTermination(
  run: FlowRun,
  statuses: Map<string, StepStatus>,
  now: Date,
  skip: (stepId: string) => void,
): RunTermination | undefined {
  if (run.cancelRequestedAt !== undefined) return terminalCause(run, statuses, now);
  const { issues, order } = analyseGraph(run.steps);
  const [issue] = issues;
  if (issue !== undefined) {
    return { status: 'FAILED', cause: 'invalid_graph', issue, issueCount: issues.length };
  }
  // A graph without issues always has an order.
  for (const id of order ?? []) {
    if (statuses.get(id) !== 'PENDING') continue;
    const deps = run.steps[id]?.dependsOn ?? [];
    if (deps.some((dep) => statuses.get(dep) === 'SKIPPED')) skip(id);
  }
  return terminalCause(run, statuses, now);
}

/** The run-level error: always non-retryable (a finished run is not retried automatically). */
function runErrorFor(run: FlowRun, termination: UnsuccessfulTermination): ErrorInfo {
  switch (termination.cause) {
    case 'cancel_requested':
      return {
        code: 'CANCELLED',
        message: 'run cancelled on request',
        details: { cancelRequestedAt: run.cancelRequestedAt },
        retryable: false,
      };
    case 'step_failed': {
      const stepError = stepOf(run, termination.stepId)?.error;
      const suffix = stepError?.message ? `: ${stepError.message}` : '';
      return {
        code: stepError?.code ?? 'INTERNAL_ERROR',
        message: `step ${termination.stepId} failed${suffix}`,
        details: { stepId: termination.stepId },
        retryable: false,
      };
    }
    case 'deadline_passed':
      return {
        code: 'RUN_TIMEOUT',
        message: `run deadline ${String(run.deadlineAt)} passed`,
        details: { deadlineAt: run.deadlineAt },
        retryable: false,
      };
    case 'step_cancelled':
      return {
        code: 'CANCELLED',
        message: `step ${termination.stepId} was cancelled`,
        details: { stepId: termination.stepId },
        retryable: false,
      };
    case 'expansion_refused':
      return {
        code: termination.error.code,
        message: `the run could not add the steps ${termination.stepId} asked for: ${termination.error.message}`,
        details: { ...termination.error.details, stepId: termination.stepId },
        retryable: false,
      };
    case 'invalid_graph':
      return {
        code: 'FLOW_RUN_INVALID',
        message: describeGraphIssue(termination.issue),
        details: { ...termination.issue, issueCount: termination.issueCount },
        retryable: false,
      };
  }
}

function cancelledStepError(termination: UnsuccessfulTermination): ErrorInfo {
  const because = ((): { message: string; details: Record<string, unknown> } => {
    switch (termination.cause) {
      case 'cancel_requested':
        return { message: 'the run was cancelled', details: { cause: termination.cause } };
      case 'step_failed':
        return {
          message: `step ${termination.stepId} failed`,
          details: { cause: termination.cause, stepId: termination.stepId },
        };
      case 'deadline_passed':
        return { message: 'the run deadline passed', details: { cause: termination.cause } };
      case 'step_cancelled':
        return {
          message: `step ${termination.stepId} was cancelled`,
          details: { cause: termination.cause, stepId: termination.stepId },
        };
      case 'invalid_graph':
        return { message: 'the run graph is invalid', details: { cause: termination.cause } };
      case 'expansion_refused':
        return {
          message: `step ${termination.stepId}'s indicator request was refused`,
          details: { cause: termination.cause, stepId: termination.stepId },
        };
    }
  })();
  return {
    code: 'CANCELLED',
    message: `cancelled because ${because.message}`,
    details: because.details,
    retryable: false,
  };
}

/**
 * Combines a decision's patch with the advance it implies, so the orchestrator writes both in one
 * conditional update (DESIGN §8: never several writes where one does).
 */
export function withAdvance(
  run: FlowRun,
  patch: RunPatch,
  now: Date,
): { patch: RunPatch; advance: AdvanceResult } {
  const next = advance(applyPatch(run, patch), now);
  return { patch: mergePatches(patch, next.patch), advance: next };
}

/** The counters with seed 004's current step (absent while no step has started or is ready). */
function withCurrentStep(
  counters: ProgressCounters,
  run: FlowRun,
  statuses: ReadonlyMap<string, StepStatus>,
): RunProgress {
  const currentStepId = currentStepOf(run, statuses);
  return currentStepId === undefined ? counters : { ...counters, currentStepId };
}
