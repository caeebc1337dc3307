import type { RunScope, StepType, Timeframe } from '@tda/contracts';

/** What a flow contributes per step; createRun adds status, attempt, outputs, createdAt. */
export interface StepSpec {
  stepType: StepType;
  timeframe?: Timeframe;
  dependsOn: string[];
  inputs: Record<string, unknown>;
}

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
