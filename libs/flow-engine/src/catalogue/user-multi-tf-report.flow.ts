import { scopeSchema } from './scope-schema';
import type { RunScope, Timeframe } from '@tda/contracts';
import type { FlowDefinition, StepSpecs } from './flow-definition';
import {
  addTimeframeReport,
  readReportSettings,
  REPORT_SCOPE_FIELDS,
  reportScope,
} from './report-steps';
import { assertKnownKeys, readTimeframes } from './scope';

export const DEFAULT_MULTI_TF_TIMEFRAMES: readonly Timeframe[] = ['1d', '4h', '1h'];
export const MULTI_TF_PROMPT_ID = 'prompt_multi_tf_v1';

function resolve(scope: RunScope): RunScope {
  assertKnownKeys(scope, REPORT_SCOPE_FIELDS);
  return reportScope(readReportSettings(scope), readTimeframes(scope, DEFAULT_MULTI_TF_TIMEFRAMES));
}

/**
 * Flow 2: a user-chosen set of timeframes (default 1d, 4h, 1h). Per timeframe OHLCV + charts + an
 * LLM report; ordered from the longest timeframe to the shortest, each report after the first
 * depends on (and reads) the report of the previous, longer timeframe.
 */
export const userMultiTfReportFlow: FlowDefinition = {
  flowKey: 'user_multi_tf_report_v1',
  description:
    'LLM reports for user-chosen timeframes of one symbol; each report builds on the next longer timeframe.',
  scopeSchema: scopeSchema(REPORT_SCOPE_FIELDS, {
    required: ['symbol'],
    timeframes: DEFAULT_MULTI_TF_TIMEFRAMES,
  }),
  resolveScope: resolve,
  build(scope) {
    const resolved = resolve(scope);
    const settings = readReportSettings(resolved);
    const specs: StepSpecs = {};
    let previous: string | undefined;
    for (const timeframe of resolved.timeframes ?? []) {
      const steps = addTimeframeReport(
        specs,
        settings,
        timeframe,
        MULTI_TF_PROMPT_ID,
        previous === undefined ? [] : [previous],
      );
      previous = steps.reportStepId;
    }
    return specs;
  },
};
