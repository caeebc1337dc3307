import { scopeSchema } from './scope-schema';
import type { FlowDefinition } from './flow-definition';
import {
  buildRecommendationSteps,
  DEFAULT_RECOMMENDATION_TIMEFRAMES,
  RECOMMENDATION_REPORT_PROMPT_ID,
  resolveRecommendationScope,
} from './recommendation-with-account.flow';
import { REPORT_SCOPE_FIELDS } from './report-steps';

export const NEWS_FLOW_KEY = 'recommendation_with_news_v1';
/** prompt_reco_v1 plus the rules for the news document (untrusted third-party text). */
export const NEWS_RECOMMENDATION_PROMPT_ID = 'prompt_reco_news_v1';
/** llm_recommendation_output_v1 plus the optional rationale.newsCitations (flow 6). */
export const LLM_RECOMMENDATION_NEWS_SCHEMA_ID = 'llm_recommendation_output_v2';

/**
 * Flow 6 (seed 001): flow 4 plus a `news_export` step — headlines for the symbol in the window
 * before asOf, from the configured provider (none: zero items, said so) — that the
 * recommendation reads as untrusted text and may cite by url.
 */
export const recommendationWithNewsFlow: FlowDefinition = {
  flowKey: NEWS_FLOW_KEY,
  description:
    'Flow 4 plus the news: a news_export step (headlines before asOf) that the recommendation weighs as untrusted text and cites by url.',
  scopeSchema: scopeSchema([...REPORT_SCOPE_FIELDS, 'accountId'], {
    required: ['symbol', 'accountId'],
    timeframes: DEFAULT_RECOMMENDATION_TIMEFRAMES,
  }),
  resolveScope: resolveRecommendationScope,
  build: (scope) =>
    buildRecommendationSteps(scope, {
      reports: { promptId: RECOMMENDATION_REPORT_PROMPT_ID },
      recommendation: {
        promptId: NEWS_RECOMMENDATION_PROMPT_ID,
        outputSchemaId: LLM_RECOMMENDATION_NEWS_SCHEMA_ID,
      },
      news: true,
    }),
};
