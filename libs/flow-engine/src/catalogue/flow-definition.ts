import type { ScopeSchema } from './scope-schema';
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

/** A (symbol, timeframe) a run reads candles for: what its asOf must be reachable in. */
export interface MarketDataNeed {
  symbol: string;
  timeframe: Timeframe;
}

/** Flow 3: which existing reports to resolve into scope.reportRefs at trigger. */
export interface ReportRefsNeed {
  symbol: string;
  /** Explicit reports; else the latest report per timeframe at or before the run's asOf. */
  reportIds?: string[];
  timeframes: Timeframe[];
}

/**
 * What a run refers to outside itself, checked and resolved at trigger (I/O, the orchestrator's
 * preflight) before the run is built for good: the market data its asOf must reach, the account
 * it sizes against, the reports it aggregates.
 */
export interface FlowNeeds {
  marketData: MarketDataNeed[];
  accountId?: string;
  reports?: ReportRefsNeed;
}

/**
 * One entry of the flow catalogue: flowKey (`*_v<N>`, immutable once used: a change of shape is a
 * new version) -> the steps of a run.
 */
export interface FlowDefinition {
  flowKey: string;
  description: string;
  /** The scope a caller may give, as JSON Schema (GET /flows; the console's trigger form). */
  scopeSchema: ScopeSchema;
  /**
   * Validates the caller's scope and fills the defaults; the result is stored as run.scope, so a
   * run document says exactly what it was built from. Throws InvalidRequestError.
   */
  resolveScope(scope: RunScope): RunScope;
  /**
   * Flow 5: the run may grow at run time (an LLM step's indicator request). Its runs are created
   * with `expansionLimits`; a run without them never expands.
   */
  dynamicSteps?: boolean;
  /** The step graph for a resolved scope. Pure and deterministic. */
  build(scope: RunScope, ctx: FlowBuildContext): StepSpecs;
  /**
   * What the trigger must check and resolve for a resolved scope. Default: the market data of
   * the built OHLCV steps and scope.accountId. A flow whose build needs trigger-resolved fields
   * (flow 3's reportRefs) says so here instead.
   */
  needs?(scope: RunScope): FlowNeeds;
}
