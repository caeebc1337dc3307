import type { RunScope, StepInputsByType, StepType, Timeframe } from '@tda/contracts';

/** The typed inputs of a step type (its contracts/<step_type>_inputs.schema.json). */
export type StepInputsOf<T extends StepType> = T extends keyof StepInputsByType
  ? StepInputsByType[T]
  : Record<string, unknown>;

/**
 * What a flow contributes per step; createRun adds status, attempt, outputs, createdAt. The
 * inputs are typed by the step type, so a flow builds exactly what the step's worker validates.
 */
export type StepSpec = {
  [T in StepType]: {
    stepType: T;
    timeframe?: Timeframe;
    dependsOn: string[];
    inputs: StepInputsOf<T>;
  };
}[StepType];

export type StepSpecs = Record<string, StepSpec>;

export interface FlowBuildContext {
  runId: string;
  /** RFC 3339 creation time of the run. */
  createdAt: string;
}

/**
 * One entry of the flow catalogue: flowKey (`*_v<N>`, immutable once used: a change of shape is a
 * new version) -> the steps of a run.
 */
export interface FlowDefinition {
  flowKey: string;
  description: string;
  /**
   * Validates the caller's scope and fills the defaults; the result is stored as run.scope, so a
   * run document says exactly what it was built from. Throws InvalidRequestError.
   */
  resolveScope(scope: RunScope): RunScope;
  /** The step graph for a resolved scope. Pure and deterministic. */
  build(scope: RunScope, ctx: FlowBuildContext): StepSpecs;
}
