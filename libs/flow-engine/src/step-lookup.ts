import type { FlowRun, FlowStep } from '@tda/contracts';

/**
 * `steps[stepId]` when it is the record's OWN entry. stepIds reach the engine from requests and
 * messages; a plain `steps[stepId]` would hand back Object.prototype members (`constructor`,
 * `toString`, `hasOwnProperty`, `valueOf`) as if they were steps.
 */
export function ownStep<T>(steps: Readonly<Record<string, T>>, stepId: string): T | undefined {
  return Object.hasOwn(steps, stepId) ? steps[stepId] : undefined;
}

/** The run's step `stepId`, or undefined when the run has no such step (own properties only). */
export function stepOf(run: Pick<FlowRun, 'steps'>, stepId: string): FlowStep | undefined {
  return ownStep(run.steps, stepId);
}

/** Whether the run has a step `stepId` (own properties only; see ownStep). */
export function hasStep(run: Pick<FlowRun, 'steps'>, stepId: string): boolean {
  return Object.hasOwn(run.steps, stepId);
}
