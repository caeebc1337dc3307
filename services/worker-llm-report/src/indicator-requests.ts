import type { FlowRun, FlowStep, StepOutputs, Timeframe } from '@tda/contracts';
import { checkIndicatorRequests, describeIndicatorCatalogue } from '@tda/flow-engine';
import type { LlmCallPlan, OutputCheck } from '@tda/llm';

type IndicatorRequests = NonNullable<StepOutputs['indicatorRequests']>;

/** Whether the step's output format has flow 5's `indicatorRequests` (llm_report_output_v2). */
function offersRequests(plan: LlmCallPlan): boolean {
  const properties = plan.config.generationConfig.responseJsonSchema['properties'];
  return typeof properties === 'object' && properties !== null && 'indicatorRequests' in properties;
}

/** The timeframes of the run's OHLCV steps: what indicators can be computed on. */
export function runTimeframes(run: FlowRun): Timeframe[] {
  const found = new Set<Timeframe>();
  for (const step of Object.values(run.steps)) {
    if (step.stepType === 'OHLCV_EXPORT' && step.timeframe !== undefined) found.add(step.timeframe);
  }
  return [...found];
}

/**
 * What UserInput says this step may request (flow 5): undefined when the output format has no
 * `indicatorRequests`; [] (the prompt then says "none") when the run cannot grow from this step
 * (no expansionLimits, or the step is at the run's expansion depth); else the catalogue lines.
 */
export function requestableIndicators(
  plan: LlmCallPlan,
  run: FlowRun,
  step: FlowStep,
): string[] | undefined {
  if (!offersRequests(plan)) return undefined;
  const limits = run.expansionLimits;
  if (limits === undefined || (step.addedBy?.depth ?? 0) >= limits.maxDepth) return [];
  return describeIndicatorCatalogue(runTimeframes(run));
}

/**
 * The output check of a report that may ask: a request must name catalogue indicators with
 * parameters in bounds and timeframes of the run (a broken rule is invalid output, repaired once);
 * a request where none may be made is invalid too. Violations name the rule, never output text.
 */
export function indicatorRequestCheck(
  timeframes: readonly Timeframe[],
  mayRequest: boolean,
): OutputCheck {
  return (output) => {
    const raw = output['indicatorRequests'];
    if (raw === undefined) return [];
    if (!mayRequest) {
      return [
        {
          rule: 'indicator_requests_not_allowed',
          path: '/indicatorRequests',
          message: 'this step may not request indicators: omit indicatorRequests',
        },
      ];
    }
    const checked = checkIndicatorRequests(raw, timeframes);
    if (checked.ok) return [];
    return [
      {
        rule: 'indicator_request_outside_catalogue',
        path: '/indicatorRequests',
        message: `use only the indicators, parameter bounds and timeframes listed under 'Indicators you may request' (${checked.message})`,
      },
    ];
  };
}

/** The checked, normalized request of a valid output (step outputs.indicatorRequests), if any. */
export function normalizedRequests(
  output: Record<string, unknown>,
  timeframes: readonly Timeframe[],
): IndicatorRequests | undefined {
  const raw = output['indicatorRequests'];
  if (raw === undefined) return undefined;
  const checked = checkIndicatorRequests(raw, timeframes);
  const [first, ...rest] = checked.ok ? checked.requests : [];
  return first === undefined ? undefined : [first, ...rest];
}
