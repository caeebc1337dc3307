import type { LlmPrompt, LlmSchema } from '@tda/contracts';
import llmReportOutputV1 from './defaults/llm_report_output_v1.json';
import promptMonthV1 from './defaults/prompt_month_v1.json';
import promptMultiTfV1 from './defaults/prompt_multi_tf_v1.json';
import promptWeekV1 from './defaults/prompt_week_v1.json';
import { parsePromptDocument, parseSchemaDocument } from './registry-documents';

/**
 * The registry content a fresh environment needs: the prompts the flow catalogue references
 * (libs/flow-engine catalogue: prompt_month_v1, prompt_week_v1, prompt_multi_tf_v1) and the
 * default report output schema. The JSON files under ./defaults are the single source; the
 * contracts examples llm_prompt(.week).example.json and llm_schema.example.json must equal them
 * (default-registry.spec.ts checks it), so docs and seeds cannot drift apart.
 */

export const DEFAULT_REPORT_SCHEMA_ID = 'llm_report_output_v1';

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

export const DEFAULT_PROMPTS: readonly LlmPrompt[] = deepFreeze(
  [promptMonthV1, promptWeekV1, promptMultiTfV1].map((doc) =>
    parsePromptDocument(doc.promptId, structuredClone(doc)),
  ),
);

export const DEFAULT_SCHEMAS: readonly LlmSchema[] = deepFreeze(
  [llmReportOutputV1].map((doc) => parseSchemaDocument(doc.schemaId, structuredClone(doc))),
);

/** The default llm_report_output_v1 document. */
export function defaultReportSchema(): LlmSchema {
  const schema = DEFAULT_SCHEMAS.find((s) => s.schemaId === DEFAULT_REPORT_SCHEMA_ID);
  if (schema === undefined) throw new Error(`${DEFAULT_REPORT_SCHEMA_ID} is not a default schema`);
  return schema;
}
