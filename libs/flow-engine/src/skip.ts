import type { ErrorInfo, FlowRun, StepStatus } from '@tda/contracts';
import { withAdvance, type AdvanceResult } from './advance';
import { isStorageSafeStepId } from './ids';
import { stepPath, type RunPatch } from './patch';
import { isTerminalRunStatus } from './run-status';
import { stepOf } from './step-lookup';
import { toTimestamp } from './time';

export interface SkipOptions {
  now: Date;
  /** Optional explanation stored on the skipped step (seed 000: SKIPPED with an optional error). */
  error?: ErrorInfo;
}

export type SkipDecision =
  | { kind: 'skip'; stepId: string; patch: RunPatch; advance: AdvanceResult }
  | {
      kind: 'noop';
      stepId: string;
      reason: 'unknown_step' | 'run_terminal' | 'not_skippable';
      status?: StepStatus;
    };

/**
 * The orchestrator's policy hook for branching (seed 000): PENDING/READY -> SKIPPED, merged with
 * the advance it implies (dependents of a SKIPPED step are skipped too; a run whose steps are all
 * SUCCEEDED/SKIPPED succeeds). A step a worker already claimed cannot be skipped.
 */
export function decideSkip(run: FlowRun, stepId: string, options: SkipOptions): SkipDecision {
  const step = isStorageSafeStepId(stepId) ? stepOf(run, stepId) : undefined;
  if (step === undefined) return { kind: 'noop', stepId, reason: 'unknown_step' };
  if (isTerminalRunStatus(run.status)) {
    return { kind: 'noop', stepId, reason: 'run_terminal', status: step.status };
  }
  if (step.status !== 'PENDING' && step.status !== 'READY') {
    return { kind: 'noop', stepId, reason: 'not_skippable', status: step.status };
  }
  const skip: Record<string, unknown> = {
    [stepPath(stepId, 'status')]: 'SKIPPED',
    [stepPath(stepId, 'finishedAt')]: toTimestamp(options.now),
  };
  if (options.error !== undefined) skip[stepPath(stepId, 'error')] = options.error;
  const { patch, advance } = withAdvance(run, skip, options.now);
  return { kind: 'skip', stepId, patch, advance };
}
