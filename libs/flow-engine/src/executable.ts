import type { FlowRun, FlowStep, RunStatus, StepStatus, StepType } from '@tda/contracts';
import { isStorageSafeStepId } from './ids';
import { sortedSteps } from './patch';
import { hasStep, stepOf } from './step-lookup';

export interface DependencyState {
  stepId: string;
  status: StepStatus;
}

/** Why a step-ready message is a no-op for a worker (log it, then ack). */
export type NotExecutableReason =
  | { kind: 'unsafe_step_id' }
  | { kind: 'unknown_step' }
  | { kind: 'step_type_mismatch'; expected: StepType; actual: StepType }
  | { kind: 'run_not_running'; runStatus: RunStatus }
  | { kind: 'cancel_requested'; cancelRequestedAt: string }
  | { kind: 'not_ready'; status: StepStatus }
  | { kind: 'unknown_dependency'; dependencies: string[] }
  | { kind: 'unmet_dependencies'; dependencies: DependencyState[] };

export type Executability =
  | { executable: true; stepId: string; step: FlowStep }
  | { executable: false; stepId: string; reason: NotExecutableReason };

/**
 * Seed 002 scenario A/B: a step is executable when it exists (under a storage-safe id), has the
 * expected stepType, is READY, every dependsOn exists and is SUCCEEDED, and the run is RUNNING
 * with no cancel requested. Checks run in that order; the first failing one is the reason.
 */
export function isExecutable(run: FlowRun, stepId: string, stepType?: StepType): Executability {
  const no = (reason: NotExecutableReason): Executability => ({
    executable: false,
    stepId,
    reason,
  });
  if (!isStorageSafeStepId(stepId)) return no({ kind: 'unsafe_step_id' });
  const step = stepOf(run, stepId);
  if (step === undefined) return no({ kind: 'unknown_step' });
  if (stepType !== undefined && step.stepType !== stepType) {
    return no({ kind: 'step_type_mismatch', expected: stepType, actual: step.stepType });
  }
  if (run.status !== 'RUNNING') return no({ kind: 'run_not_running', runStatus: run.status });
  if (run.cancelRequestedAt !== undefined) {
    return no({ kind: 'cancel_requested', cancelRequestedAt: run.cancelRequestedAt });
  }
  if (step.status !== 'READY') return no({ kind: 'not_ready', status: step.status });
  const unknown = step.dependsOn.filter((dep) => !hasStep(run, dep));
  if (unknown.length > 0) return no({ kind: 'unknown_dependency', dependencies: unknown });
  const unmet = unmetDependencies(run, step);
  if (unmet.length > 0) return no({ kind: 'unmet_dependencies', dependencies: unmet });
  return { executable: true, stepId, step };
}

/** The known dependencies of `step` that are not SUCCEEDED, with their statuses. */
export function unmetDependencies(
  run: FlowRun,
  step: Pick<FlowStep, 'dependsOn'>,
): DependencyState[] {
  return step.dependsOn.flatMap((dep) => {
    const status = stepOf(run, dep)?.status;
    return status === undefined || status === 'SUCCEEDED' ? [] : [{ stepId: dep, status }];
  });
}

/**
 * The executable step of `stepType` with the lowest stepId (seed 002: deterministic pick), or
 * undefined when there is none (scenario A: no writes).
 */
export function selectExecutableStep(
  run: FlowRun,
  stepType: StepType,
): { stepId: string; step: FlowStep } | undefined {
  for (const [stepId, step] of sortedSteps(run)) {
    if (step.stepType !== stepType) continue;
    const verdict = isExecutable(run, stepId, stepType);
    if (verdict.executable) return { stepId, step: verdict.step };
  }
  return undefined;
}

export function describeNotExecutable(reason: NotExecutableReason): string {
  switch (reason.kind) {
    case 'unsafe_step_id':
      return 'the stepId is not storage-safe';
    case 'unknown_step':
      return 'the run has no such step';
    case 'step_type_mismatch':
      return `the step is ${reason.actual}, not ${reason.expected}`;
    case 'run_not_running':
      return `the run is ${reason.runStatus}`;
    case 'cancel_requested':
      return `cancel was requested at ${reason.cancelRequestedAt}`;
    case 'not_ready':
      return `the step is ${reason.status}, not READY`;
    case 'unknown_dependency':
      return `unknown dependencies: ${reason.dependencies.join(', ')}`;
    case 'unmet_dependencies':
      return `waiting for ${reason.dependencies.map((d) => `${d.stepId} (${d.status})`).join(', ')}`;
  }
}
