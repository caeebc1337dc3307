import { scopeSchema } from './scope-schema';
import type { RunScope, Timeframe } from '@tda/contracts';
import { InvalidRequestError } from '../errors';
import type { FlowDefinition, StepSpecs } from './flow-definition';
import {
  addTimeframeReport,
  readReportSettings,
  REPORT_SCOPE_FIELDS,
  reportScope,
} from './report-steps';
import { assertKnownKeys, readTimeframes } from './scope';

const TIMEFRAMES: Timeframe[] = ['1M', '1w'];
export const MONTH_PROMPT_ID = 'prompt_month_v1';
export const WEEK_PROMPT_ID = 'prompt_week_v1';

function resolve(scope: RunScope): RunScope {
  assertKnownKeys(scope, REPORT_SCOPE_FIELDS);
  const timeframes = readTimeframes(scope, TIMEFRAMES);
  if (timeframes.join() !== TIMEFRAMES.join()) {
    throw new InvalidRequestError('scope.timeframes of this flow are fixed to 1M and 1w', {
      field: 'scope.timeframes',
      allowed: TIMEFRAMES,
    });
  }
  return reportScope(readReportSettings(scope), timeframes);
}

/**
 * Flow 1 (seed 001): the scheduled month + week report of one symbol. OHLCV and charts per
 * timeframe; the monthly report first, then the weekly report, which reads the monthly one.
 */
export const scheduledMonthWeekReportFlow: FlowDefinition = {
  flowKey: 'scheduled_month_week_report_v1',
  description:
    'Monthly and weekly LLM report for one symbol: OHLCV + charts per timeframe, the 1w report builds on the 1M report.',
  scopeSchema: scopeSchema(REPORT_SCOPE_FIELDS, { required: ['symbol'], timeframes: TIMEFRAMES }),
  resolveScope: resolve,
  build(scope) {
    const settings = readReportSettings(resolve(scope));
    const specs: StepSpecs = {};
    const month = addTimeframeReport(specs, settings, '1M', MONTH_PROMPT_ID);
    addTimeframeReport(specs, settings, '1w', WEEK_PROMPT_ID, [month.reportStepId]);
    return specs;
  },
};
