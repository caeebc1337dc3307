import { validate } from '@tda/contracts';
import { loadExample } from '@tda/contracts/testing';
import { getFlow, listFlows } from '@tda/flow-engine';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_PROMPTS,
  DEFAULT_REPORT_SCHEMA_ID,
  DEFAULT_SCHEMAS,
  defaultReportSchema,
} from './default-registry';
import { validateLlmProfile } from './llm-profile';
import { checkReportSchemaInvariants } from './output-schema';

function withoutTimestamps(doc: unknown): unknown {
  const { createdAt: _c, updatedAt: _u, ...rest } = doc as Record<string, unknown>;
  return rest;
}

describe('default registry content', () => {
  it('is the single source of the contracts examples (month/week prompts, report schema)', () => {
    const byId = new Map(DEFAULT_PROMPTS.map((p) => [p.promptId, p]));
    expect(byId.get('prompt_month_v1')).toEqual(
      withoutTimestamps(loadExample('llm_prompt.example.json')),
    );
    expect(byId.get('prompt_week_v1')).toEqual(
      withoutTimestamps(loadExample('llm_prompt.week.example.json')),
    );
    expect(defaultReportSchema()).toEqual(
      withoutTimestamps(loadExample('llm_schema.example.json')),
    );
  });

  it('holds valid documents with unique ids, the report schema meeting the minimal invariants', () => {
    for (const prompt of DEFAULT_PROMPTS) expect(validate.llmPrompt(prompt).ok).toBe(true);
    for (const schema of DEFAULT_SCHEMAS) expect(validate.llmSchema(schema).ok).toBe(true);
    const ids = [
      ...DEFAULT_PROMPTS.map((p) => p.promptId),
      ...DEFAULT_SCHEMAS.map((s) => s.schemaId),
    ];
    expect(new Set(ids).size).toBe(ids.length);
    expect(DEFAULT_REPORT_SCHEMA_ID).toBe('llm_report_output_v1');
    expect(checkReportSchemaInvariants(defaultReportSchema().jsonSchema)).toEqual([]);
  });

  it('is deeply frozen, so no caller can change the seed for everyone', () => {
    const schema = defaultReportSchema();
    expect(Object.isFrozen(schema)).toBe(true);
    expect(Object.isFrozen(schema.jsonSchema['properties'])).toBe(true);
    expect(() => {
      (DEFAULT_PROMPTS[0] as { userPrompt: string }).userPrompt = 'x';
    }).toThrow(TypeError);
  });

  it('covers every prompt and schema the flow catalogue references, and its profiles pass pre-flight', () => {
    const promptIds = new Set(DEFAULT_PROMPTS.map((p) => p.promptId));
    let reportSteps = 0;
    for (const { flowKey } of listFlows()) {
      const specs = getFlow(flowKey).build(
        { symbol: 'BTC-USDT' },
        { runId: '20260301-120000_BTC-USDT_abc123', createdAt: '2026-03-01T12:00:00Z' },
      );
      for (const spec of Object.values(specs)) {
        if (spec.stepType !== 'LLM_REPORT') continue;
        reportSteps += 1;
        const llm = spec.inputs['llm'] as { promptId: string; llmProfile: unknown };
        expect(promptIds.has(llm.promptId)).toBe(true);
        for (const provider of ['gemini', 'offline'] as const) {
          const result = validateLlmProfile(llm.llmProfile, {
            provider,
            schema: { status: 'found', schema: defaultReportSchema() },
          });
          expect(result.ok).toBe(true);
        }
      }
    }
    expect(reportSteps).toBeGreaterThanOrEqual(5);
  });
});
