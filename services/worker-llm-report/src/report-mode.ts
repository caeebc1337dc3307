import type { ReportRef, Timeframe } from '@tda/contracts';
import { stepIdTimeframe } from '@tda/flow-engine';
import { isAggregateReportSchemaId, LlmProfileError, type LlmCallPlan } from '@tda/llm';
import type { LLM_REPORT_STEP } from '@tda/step-types';
import { StepInputError, type StepContext } from '@tda/worker-kit';

type Context = StepContext<typeof LLM_REPORT_STEP>;

/**
 * What an LLM_REPORT step writes: the report of one timeframe (its OHLCV export and charts), or
 * an aggregated report of existing reports (flow 3, inputs.reportRefs) describing the run's asOf.
 */
export type ReportMode =
  | { kind: 'timeframe'; timeframe: Timeframe }
  | { kind: 'aggregate'; refs: readonly ReportRef[]; asOf: string };

/**
 * The step's mode from its inputs, checked before the registry or a model is asked
 * (StepInputError, INVALID_STEP_INPUTS): an aggregated report names only reportRefs, has no
 * timeframe and needs the run's asOf (no input may describe a later moment); a report of one
 * timeframe needs its OHLCV and charts steps and a timeframe its stepId agrees with (seed 002).
 */
export function reportModeOf(context: Context): ReportMode {
  const { inputs, step, stepId, run } = context;
  if (inputs.reportRefs === undefined)
    return { kind: 'timeframe', timeframe: timeframeOf(context) };
  const mixed = (['ohlcvStepId', 'chartsManifestStepId'] as const).find(
    (field) => inputs[field] !== undefined,
  );
  if (mixed !== undefined || (inputs.previousReportStepIds ?? []).length > 0) {
    throw new StepInputError(
      'an aggregated report (inputs.reportRefs) reads no OHLCV, charts or previous report steps',
      { field: mixed ?? 'previousReportStepIds' },
    );
  }
  if (step.timeframe !== undefined || stepIdTimeframe(stepId) !== undefined) {
    throw new StepInputError('an aggregated LLM_REPORT step has no timeframe', {
      field: 'timeframe',
    });
  }
  const asOf = run.scope.asOf;
  if (asOf === undefined) {
    throw new StepInputError('an aggregated report needs the run scope.asOf', {
      field: 'scope.asOf',
    });
  }
  return { kind: 'aggregate', refs: inputs.reportRefs, asOf };
}

/** A report of one timeframe: the step's timeframe, which its stepId's segment must be. */
function timeframeOf(context: Context): Timeframe {
  const { timeframe } = context.step;
  if (timeframe === undefined) {
    throw new StepInputError('an LLM_REPORT step needs a timeframe', { field: 'timeframe' });
  }
  const segment = stepIdTimeframe(context.stepId);
  if (segment !== undefined && segment !== timeframe) {
    throw new StepInputError(`stepId names timeframe ${segment}, the step has ${timeframe}`, {
      field: 'timeframe',
    });
  }
  for (const field of ['ohlcvStepId', 'chartsManifestStepId'] as const) {
    if (context.inputs[field] === undefined) {
      throw new StepInputError(`a report of one timeframe needs inputs.${field}`, { field });
    }
  }
  return timeframe;
}

/**
 * The output format must fit the mode (pre-flight, LLM_PROFILE_INVALID before any model call):
 * an aggregated report cites its inputs (llm_aggregate_report_output_v<N>), a report of one
 * timeframe has no inputs to cite.
 */
export function checkOutputFormat(plan: LlmCallPlan, mode: ReportMode): void {
  const { schemaId } = plan.config;
  const aggregate = isAggregateReportSchemaId(schemaId);
  if (mode.kind === 'aggregate' && !aggregate) {
    throw new LlmProfileError(
      'structuredOutput.schemaId',
      `llmProfile.structuredOutput.schemaId: an aggregated report needs an llm_aggregate_report_output_v{N} schema, not '${schemaId}'`,
      { field: 'structuredOutput.schemaId' },
    );
  }
  if (mode.kind === 'timeframe' && aggregate) {
    throw new LlmProfileError(
      'structuredOutput.schemaId',
      `llmProfile.structuredOutput.schemaId: '${schemaId}' is for aggregated reports (inputs.reportRefs)`,
      { field: 'structuredOutput.schemaId' },
    );
  }
}
