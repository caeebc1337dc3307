import { scopeSchema } from './scope-schema';
import type { FlowDefinition } from './flow-definition';
import {
  buildRecommendationSteps,
  DEFAULT_RECOMMENDATION_TIMEFRAMES,
  resolveRecommendationScope,
} from './recommendation-with-account.flow';
import { REPORT_SCOPE_FIELDS } from './report-steps';

export const INDICATORS_FLOW_KEY = 'recommendation_with_indicators_v1';
/** The report prompt that lists the indicator catalogue the model may ask from. */
export const INDICATOR_REPORT_PROMPT_ID = 'prompt_multi_tf_indicators_v1';
/** llm_report_output_v1 plus the optional `indicatorRequests` (flow 5). */
export const LLM_REPORT_INDICATORS_SCHEMA_ID = 'llm_report_output_v2';

/**
 * Flow 5 (seed 001): flow 4 whose reports may ask for more evidence. A report's output may carry
 * `indicatorRequests` (from the catalogue its prompt lists); the orchestrator then inserts
 * `indicators_on_demand:<tf>:req_<id>` steps and a follow-up report that depends on them and on
 * the first answer, and the next report and the recommendation read the follow-up instead
 * (flow-engine dynamic/expand-indicators.ts). Bounded per run by `expansionLimits`.
 */
export const recommendationWithIndicatorsFlow: FlowDefinition = {
  flowKey: INDICATORS_FLOW_KEY,
  description:
    'Flow 4 whose reports may ask for indicators at run time: dynamic indicators_on_demand steps and a follow-up report that uses their values.',
  scopeSchema: scopeSchema([...REPORT_SCOPE_FIELDS, 'accountId'], {
    required: ['symbol', 'accountId'],
    timeframes: DEFAULT_RECOMMENDATION_TIMEFRAMES,
  }),
  resolveScope: resolveRecommendationScope,
  dynamicSteps: true,
  build: (scope) =>
    buildRecommendationSteps(scope, {
      reports: {
        promptId: INDICATOR_REPORT_PROMPT_ID,
        outputSchemaId: LLM_REPORT_INDICATORS_SCHEMA_ID,
      },
    }),
};
