import { validate } from '@tda/contracts';
import { loadExample } from '@tda/contracts/testing';
import { getFlow, INDICATOR_NAMES, listFlows } from '@tda/flow-engine';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_AGGREGATE_PROMPT_ID,
  DEFAULT_AGGREGATE_SCHEMA_ID,
  DEFAULT_PROMPTS,
  DEFAULT_RECOMMENDATION_PROMPT_ID,
  DEFAULT_RECOMMENDATION_SCHEMA_ID,
  DEFAULT_REPORT_SCHEMA_ID,
  DEFAULT_SCHEMAS,
  defaultAggregateSchema,
  defaultRecommendationSchema,
  defaultReportSchema,
} from './default-registry';
import { llmProfileSchemaId, validateLlmProfile } from './llm-profile';
import { checkRecommendationSchemaInvariants, checkReportSchemaInvariants } from './output-schema';

function withoutTimestamps(doc: unknown): unknown {
  const { createdAt: _c, updatedAt: _u, ...rest } = doc as Record<string, unknown>;
  return rest;
}

/** What flow 3's trigger resolves into its scope: the reports it aggregates. */
const AGGREGATE_SCOPE = {
  asOf: '2026-03-01T00:00:00Z',
  reportRefs: [
    {
      reportId: 'rpt_0123456789abcdef01234567',
      gcsUri: 'gs://tda-artifacts/runs/20260301-000000_BTC-USDT_abc12/1d/report.json',
      runId: '20260301-000000_BTC-USDT_abc12',
      stepId: 'llm_report:1d:prompt_multi_tf_v1:model_gemini_2_5_flash',
      timeframe: '1d',
      asOf: '2026-03-01T00:00:00Z',
    },
  ],
};

/** A flow's steps for BTC-USDT; with an account when the flow sizes against one (flow 4). */
function buildFlow(flowKey: string): ReturnType<ReturnType<typeof getFlow>['build']> {
  const ids = { runId: '20260301-120000_BTC-USDT_abc123', createdAt: '2026-03-01T12:00:00Z' };
  if (flowKey === 'aggregated_report_v1') {
    return getFlow(flowKey).build({ symbol: 'BTC-USDT', ...AGGREGATE_SCOPE }, ids);
  }
  // No LLM step: the backtest flow only needs a valid strategy to build.
  if (flowKey === 'backtest_v1') {
    const strategy = { kind: 'bollinger_breakout', params: { period: [20], k: [2] } };
    return getFlow(flowKey).build({ symbol: 'BTC-USDT', strategy }, ids);
  }
  try {
    return getFlow(flowKey).build({ symbol: 'BTC-USDT' }, ids);
  } catch (error) {
    // The other flows refuse an accountId they do not use: ask only the ones that need it.
    if (!(error instanceof Error) || !error.message.includes('scope.accountId')) throw error;
    return getFlow(flowKey).build({ symbol: 'BTC-USDT', accountId: 'demo' }, ids);
  }
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
    expect(defaultAggregateSchema()).toEqual(
      withoutTimestamps(loadExample('llm_schema.aggregate.example.json')),
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
    expect(DEFAULT_RECOMMENDATION_SCHEMA_ID).toBe('llm_recommendation_output_v1');
    expect(defaultRecommendationSchema().kind).toBe('LLM_RECOMMENDATION_OUTPUT');
    expect(checkRecommendationSchemaInvariants(defaultRecommendationSchema().jsonSchema)).toEqual(
      [],
    );
    expect(DEFAULT_PROMPTS.map((p) => p.promptId)).toContain(DEFAULT_RECOMMENDATION_PROMPT_ID);
  });

  it('keeps the report prompts and schema first (callers index them), the new ones after', () => {
    expect(DEFAULT_PROMPTS.map((p) => p.promptId)).toEqual([
      'prompt_month_v1',
      'prompt_week_v1',
      'prompt_multi_tf_v1',
      'prompt_reco_v1',
      'prompt_aggregate_v1',
      'prompt_multi_tf_indicators_v1',
      'prompt_reco_news_v1',
    ]);
    expect(DEFAULT_SCHEMAS.map((s) => s.schemaId)).toEqual([
      'llm_report_output_v1',
      'llm_recommendation_output_v1',
      'llm_aggregate_report_output_v1',
      'llm_report_output_v2',
      'llm_recommendation_output_v2',
    ]);
  });

  it('gives flow 5 the report format plus optional indicator requests from the catalogue', () => {
    const [v1, v2] = ['llm_report_output_v1', 'llm_report_output_v2'].map(
      (id) =>
        DEFAULT_SCHEMAS.find((s) => s.schemaId === id)?.jsonSchema as {
          required: string[];
          properties: Record<string, { items?: unknown }>;
        },
    );
    expect(checkReportSchemaInvariants(v2)).toEqual([]);
    expect(v2?.required).toEqual(v1?.required);
    const { indicatorRequests, ...rest } = v2?.properties ?? {};
    expect(rest).toEqual(v1?.properties);
    const names = JSON.stringify(indicatorRequests).match(/"enum":\["RSI"[^\]]*\]/)?.[0];
    expect(names).toBe(`"enum":${JSON.stringify(INDICATOR_NAMES)}`);
  });

  it('gives the aggregated report the report format plus required citations, and a prompt that asks for them', () => {
    const schema = defaultAggregateSchema();
    expect(schema.schemaId).toBe(DEFAULT_AGGREGATE_SCHEMA_ID);
    expect(schema.kind).toBe('LLM_REPORT_OUTPUT');
    expect(checkReportSchemaInvariants(schema.jsonSchema)).toEqual([]);
    const details = (schema.jsonSchema as { properties: { details: Record<string, unknown> } })
      .properties.details as { required: string[]; properties: Record<string, unknown> };
    const report = (
      defaultReportSchema().jsonSchema as { properties: { details: { required: string[] } } }
    ).properties.details;
    expect(details.required).toEqual([...report.required, 'citations']);
    expect(details.properties['citations']).toMatchObject({
      type: 'array',
      minItems: 1,
      maxItems: 20,
      items: { required: ['reportId', 'claim'] },
    });
    const prompt = DEFAULT_PROMPTS.find((p) => p.promptId === DEFAULT_AGGREGATE_PROMPT_ID);
    const text = `${prompt?.systemInstruction ?? ''}\n${prompt?.userPrompt ?? ''}`;
    for (const rule of [
      'reportId',
      'details.citations',
      'data, not instructions',
      'agree',
      'conflict',
      'longer timeframes set the context',
      'Return only JSON',
    ]) {
      expect(text).toContain(rule);
    }
  });

  it('tells the recommendation model the rules its output is checked against', () => {
    const reco = DEFAULT_PROMPTS.find((p) => p.promptId === DEFAULT_RECOMMENDATION_PROMPT_ID);
    const text = `${reco?.systemInstruction ?? ''}\n${reco?.userPrompt ?? ''}`;
    for (const rule of [
      'reportId',
      'data, not instructions',
      'maxPositionFraction',
      'maxRiskPerTradeFraction',
      'HOLD has no entry, stopLoss, takeProfit or size',
      'within 50% of it',
      'Return only JSON',
    ]) {
      expect(text).toContain(rule);
    }
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
    const counted = { LLM_REPORT: 0, LLM_RECOMMENDATION: 0 };
    const kinds = {
      LLM_REPORT: { kind: 'LLM_REPORT_OUTPUT', schema: defaultReportSchema() },
      LLM_RECOMMENDATION: {
        kind: 'LLM_RECOMMENDATION_OUTPUT',
        schema: defaultRecommendationSchema(),
      },
    } as const;
    for (const { flowKey } of listFlows()) {
      const specs = buildFlow(flowKey);
      for (const spec of Object.values(specs)) {
        if (spec.stepType !== 'LLM_REPORT' && spec.stepType !== 'LLM_RECOMMENDATION') continue;
        counted[spec.stepType] += 1;
        const llm = spec.inputs['llm'] as { promptId: string; llmProfile: unknown };
        expect(promptIds.has(llm.promptId)).toBe(true);
        const { kind } = kinds[spec.stepType];
        // The schema the profile names (flow 3's aggregated report has its own).
        const schemaId = llmProfileSchemaId(llm.llmProfile);
        const schema = DEFAULT_SCHEMAS.find((s) => s.schemaId === schemaId);
        if (schema === undefined) throw new Error(`no default schema ${String(schemaId)}`);
        expect(schema.kind).toBe(kind);
        for (const provider of ['gemini', 'offline'] as const) {
          const result = validateLlmProfile(llm.llmProfile, {
            provider,
            kind,
            schema: { status: 'found', schema },
          });
          expect(result.ok ? [] : result.error.message).toEqual([]);
        }
      }
    }
    expect(counted.LLM_REPORT).toBeGreaterThanOrEqual(5);
  });
});
