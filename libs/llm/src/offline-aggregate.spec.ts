import type { LlmReportFile } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import { citationCheck } from './aggregate-citations';
import { assembleAggregatePrompt } from './aggregate-prompt-assembly';
import {
  DEFAULT_AGGREGATE_PROMPT_ID,
  DEFAULT_AGGREGATE_SCHEMA_ID,
  DEFAULT_PROMPTS,
  DEFAULT_SCHEMAS,
} from './default-registry';
import { InMemoryPromptRegistry } from './in-memory-prompt.registry';
import { LlmStepRuntime } from './llm-step.runtime';
import { aggregateInputView, buildOfflineAggregate, overallScore } from './offline-aggregate';
import { OFFLINE_MODEL_VERSION, OfflineAnalystClient } from './offline-analyst.client';
import { OFFLINE_ANALYST_LABEL } from './offline-report';
import {
  AGGREGATE_AS_OF,
  aggregateInputReport,
  aggregateReportRef,
  type AggregateInputFixture,
} from './testing';

const RUN = '20260920-000000_BTC-USDT_agg01';
const STEP = 'llm_report:aggregate:prompt_aggregate_v1:model_gemini_2_5_flash';
const PROFILE = {
  modelName: 'gemini-2.5-flash',
  responseMimeType: 'application/json',
  candidateCount: 1,
  structuredOutput: { schemaId: DEFAULT_AGGREGATE_SCHEMA_ID },
};

function inputs(fixtures: AggregateInputFixture[]): { file: LlmReportFile; reportId: string }[] {
  return fixtures.map((fixture) => {
    const file = aggregateInputReport(fixture);
    return { file, reportId: aggregateReportRef(file).reportId };
  });
}

function context(fixtures: AggregateInputFixture[]) {
  return {
    asOf: AGGREGATE_AS_OF,
    reports: inputs(fixtures).map(({ file, reportId }) => ({
      reportId,
      ...(file.metadata.timeframe === undefined ? {} : { timeframe: file.metadata.timeframe }),
      asOf: file.metadata.asOf ?? AGGREGATE_AS_OF,
      report: file,
    })),
  };
}

/** The offline analyst through the real runtime: registry schema, pipeline, citation check. */
async function aggregate(fixtures: AggregateInputFixture[]) {
  const runtime = new LlmStepRuntime({
    registry: new InMemoryPromptRegistry({ prompts: DEFAULT_PROMPTS, schemas: DEFAULT_SCHEMAS }),
    client: new OfflineAnalystClient(),
  });
  const plan = await runtime.plan({ promptId: DEFAULT_AGGREGATE_PROMPT_ID, llmProfile: PROFILE });
  const reports = inputs(fixtures);
  const assembled = assembleAggregatePrompt({
    prompt: plan.prompt,
    identity: { runId: RUN, stepId: STEP, symbol: 'BTC-USDT' },
    asOf: AGGREGATE_AS_OF,
    reports: reports.map(({ file, reportId }) => {
      const ref = aggregateReportRef(file);
      return {
        reportId,
        uri: ref.gcsUri,
        asOf: ref.asOf,
        timeframe: ref.timeframe ?? '1d',
        json: JSON.stringify(file),
      };
    }),
  });
  const generation = await runtime.generate(plan, assembled, {
    deadline: new Date(Date.now() + 780_000),
    signal: new AbortController().signal,
    now: () => new Date(),
    check: citationCheck(reports.map((r) => r.reportId)),
  });
  if (!generation.ok) throw new Error(`offline aggregate failed: ${generation.error.message}`);
  return { result: generation.result, reportIds: reports.map((r) => r.reportId) };
}

interface AggregateDetails {
  trend: { direction: string; strength: string; rationale: string };
  keyLevels: { support: { price: number; rationale: string }[]; resistance: { price: number }[] };
  outlook: { bias: string };
  risks: string[];
  citations: { reportId: string; claim: string }[];
}

describe('offline analyst: aggregated report (flow 3)', () => {
  it('passes the aggregate schema and the citation check in one call, one citation per input', async () => {
    const { result, reportIds } = await aggregate([
      { timeframe: '1M', direction: 'bullish', strength: 'strong' },
      { timeframe: '1d', direction: 'bullish' },
      { timeframe: '4h', direction: 'bearish', supports: [63_000], resistances: [64_500] },
    ]);
    expect(result.attempts).toBe(1);
    expect(result.repair).toEqual({ attempted: false });
    expect(result.modelVersion).toBe(OFFLINE_MODEL_VERSION);
    const details = result.output['details'] as AggregateDetails;
    expect(details.citations.map((c) => c.reportId)).toEqual(reportIds);
    expect(details.citations[0]?.claim).toBe(
      'The 1M report reads the trend as bullish (strong) with a bullish outlook.',
    );
    // the longer timeframes outweigh the bearish 4h
    expect(details.trend.direction).toBe('bullish');
    expect(details.outlook.bias).toBe('bullish');
    expect(details.trend.rationale).toBe(
      'The timeframes conflict (1M bullish, 1d bullish, 4h bearish); the longer ones set the context, so the overall view is bullish.',
    );
    // key levels of the shortest timeframe, labelled with it
    expect(details.keyLevels.support).toEqual([
      { price: 63_000, strength: 'major', rationale: '4h: Prior swing.' },
    ]);
    expect(details.keyLevels.resistance.map((l) => l.price)).toEqual([64_500]);
    expect(details.risks[0]).toBe(
      'The timeframes disagree: a move against the longer timeframe can run.',
    );
    const markdown = (result.output['summary'] as { markdown: string }).markdown;
    expect(markdown).toContain(OFFLINE_ANALYST_LABEL);
    for (const reportId of reportIds) expect(markdown).toContain(reportId);
  });

  it('says the timeframes agree when they do, and weighs strength', async () => {
    const { result } = await aggregate([
      { timeframe: '1w', direction: 'bearish', strength: 'strong' },
      { timeframe: '1d', direction: 'bearish', strength: 'strong' },
    ]);
    const details = result.output['details'] as AggregateDetails;
    expect(details.trend).toMatchObject({
      direction: 'bearish',
      strength: 'strong',
      rationale: 'The timeframes agree: 1w bearish, 1d bearish.',
    });
    expect(details.risks).not.toContain(
      'The timeframes disagree: a move against the longer timeframe can run.',
    );
  });

  it('names input reports of different moments as a risk', () => {
    const output = buildOfflineAggregate(
      'BTC-USDT',
      context([
        { timeframe: '1w', direction: 'sideways' },
        { timeframe: '1h', direction: 'sideways', asOf: '2026-09-18T00:00:00Z' },
      ]),
    );
    const details = output.details as unknown as AggregateDetails;
    expect(details.trend.direction).toBe('sideways');
    expect(details.risks).toContain(
      'The input reports describe different moments (asOf): the older ones may be stale.',
    );
  });

  it('weights a timeframe by its length: a strong 1M report outweighs a 1h report of the other direction', () => {
    const views = context([
      { timeframe: '1M', direction: 'bullish', strength: 'strong' },
      { timeframe: '1h', direction: 'bearish' },
    ]).reports.map(aggregateInputView);
    expect(views.map((v) => v.weight)).toEqual([5, 1]);
    expect(overallScore(views)).toBeCloseTo((5 * 1.5 - 1) / 6);
  });

  it('reads foreign or missing details tolerantly and still cites every input', () => {
    const [first] = context([{ timeframe: '1d' }]).reports;
    if (first === undefined) throw new Error('fixture');
    const output = buildOfflineAggregate('BTC-USDT', {
      asOf: AGGREGATE_AS_OF,
      reports: [{ ...first, report: { output: { details: { trend: 'up' } } } }],
    });
    const details = output.details as unknown as AggregateDetails;
    expect(details.trend.direction).toBe('sideways');
    expect(details.citations).toEqual([
      { reportId: first.reportId, claim: 'The 1d report states no trend direction.' },
    ]);
    expect(details.keyLevels.support).toEqual([]);
  });

  it('is deterministic', () => {
    const ctx = context([
      { timeframe: '1w', direction: 'bullish' },
      { timeframe: '4h', direction: 'bearish' },
    ]);
    expect(JSON.stringify(buildOfflineAggregate('BTC-USDT', ctx))).toBe(
      JSON.stringify(buildOfflineAggregate('BTC-USDT', structuredClone(ctx))),
    );
  });
});
