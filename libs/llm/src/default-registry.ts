import type { LlmPrompt, LlmSchema } from '@tda/contracts';
import llmAggregateReportOutputV1 from './defaults/llm_aggregate_report_output_v1.json';
import llmRecommendationOutputV1 from './defaults/llm_recommendation_output_v1.json';
import llmRecommendationOutputV2 from './defaults/llm_recommendation_output_v2.json';
import llmReportOutputV1 from './defaults/llm_report_output_v1.json';
import llmReportOutputV2 from './defaults/llm_report_output_v2.json';
import promptAggregateV1 from './defaults/prompt_aggregate_v1.json';
import promptMonthV1 from './defaults/prompt_month_v1.json';
import promptMultiTfIndicatorsV1 from './defaults/prompt_multi_tf_indicators_v1.json';
import promptMultiTfV1 from './defaults/prompt_multi_tf_v1.json';
import promptRecoNewsV1 from './defaults/prompt_reco_news_v1.json';
import promptRecoV1 from './defaults/prompt_reco_v1.json';
import promptWeekV1 from './defaults/prompt_week_v1.json';
import { parsePromptDocument, parseSchemaDocument } from './registry-documents';

/**
 * The registry content a fresh environment needs: the prompts the flow catalogue references
 * (libs/flow-engine catalogue: prompt_month_v1, prompt_week_v1, prompt_multi_tf_v1 for reports,
 * prompt_reco_v1 for recommendations, prompt_aggregate_v1 for flow 3's aggregated report,
 * prompt_multi_tf_indicators_v1 for flow 5's reports, prompt_reco_news_v1 for flow 6's
 * recommendation) and the default output schemas (llm_report_output_v1,
 * llm_recommendation_output_v1, llm_aggregate_report_output_v1, llm_report_output_v2: v1 plus
 * flow 5's indicatorRequests, llm_recommendation_output_v2: v1 plus flow 6's newsCitations). The JSON files under ./defaults are the single source; the
 * contracts examples llm_prompt(.week).example.json and llm_schema.example.json must equal them
 * (default-registry.spec.ts checks it), so docs and seeds cannot drift apart.
 */

export const DEFAULT_REPORT_SCHEMA_ID = 'llm_report_output_v1';
export const DEFAULT_RECOMMENDATION_SCHEMA_ID = 'llm_recommendation_output_v1';
export const DEFAULT_RECOMMENDATION_PROMPT_ID = 'prompt_reco_v1';
/** Flow 3's aggregated report: its prompt and output schema (the report format plus citations). */
export const DEFAULT_AGGREGATE_PROMPT_ID = 'prompt_aggregate_v1';
export const DEFAULT_AGGREGATE_SCHEMA_ID = 'llm_aggregate_report_output_v1';

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

export const DEFAULT_PROMPTS: readonly LlmPrompt[] = deepFreeze(
  // New documents go last: callers and tests index the first ones.
  [
    promptMonthV1,
    promptWeekV1,
    promptMultiTfV1,
    promptRecoV1,
    promptAggregateV1,
    promptMultiTfIndicatorsV1,
    promptRecoNewsV1,
  ].map((doc) => parsePromptDocument(doc.promptId, structuredClone(doc))),
);

export const DEFAULT_SCHEMAS: readonly LlmSchema[] = deepFreeze(
  [
    llmReportOutputV1,
    llmRecommendationOutputV1,
    llmAggregateReportOutputV1,
    llmReportOutputV2,
    llmRecommendationOutputV2,
  ].map((doc) => parseSchemaDocument(doc.schemaId, structuredClone(doc))),
);

/** The default llm_report_output_v1 document. */
export function defaultReportSchema(): LlmSchema {
  const schema = DEFAULT_SCHEMAS.find((s) => s.schemaId === DEFAULT_REPORT_SCHEMA_ID);
  if (schema === undefined) throw new Error(`${DEFAULT_REPORT_SCHEMA_ID} is not a default schema`);
  return schema;
}

/** The default llm_recommendation_output_v1 document. */
export function defaultRecommendationSchema(): LlmSchema {
  const schema = DEFAULT_SCHEMAS.find((s) => s.schemaId === DEFAULT_RECOMMENDATION_SCHEMA_ID);
  if (schema === undefined) {
    throw new Error(`${DEFAULT_RECOMMENDATION_SCHEMA_ID} is not a default schema`);
  }
  return schema;
}

/** The default llm_aggregate_report_output_v1 document (flow 3). */
export function defaultAggregateSchema(): LlmSchema {
  const schema = DEFAULT_SCHEMAS.find((s) => s.schemaId === DEFAULT_AGGREGATE_SCHEMA_ID);
  if (schema === undefined) {
    throw new Error(`${DEFAULT_AGGREGATE_SCHEMA_ID} is not a default schema`);
  }
  return schema;
}
