import { validate } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import { FlowRunInvalidError, InvalidRequestError } from '../errors';
import { seededRandom, T0 } from '../testing/run-fixtures';
import { createRun, flowCatalogue, type CreateRunInput } from './flow-catalogue';

const ref = (timeframe: string, hex: string) => ({
  reportId: `rpt_${hex.repeat(24).slice(0, 24)}`,
  gcsUri: `gs://tda-artifacts/runs/20260920-000000_BTC-USDT_abc12/${timeframe}/r.json`,
  runId: '20260920-000000_BTC-USDT_abc12',
  stepId: `llm_report:${timeframe}:prompt_multi_tf_v1:model_gemini_2_5_flash`,
  timeframe,
  asOf: '2026-09-20T00:00:00Z',
});

const input = (scope: CreateRunInput['scope']): CreateRunInput => ({
  flowKey: 'aggregated_report_v1',
  scope,
  ownerId: 'user-1',
  trigger: { type: 'USER', source: 'test' },
  now: T0,
  random: seededRandom(5),
});

const STEP = 'llm_report:aggregate:prompt_aggregate_v1:model_gemini_2_5_flash';

describe('aggregated_report_v1 (flow 3)', () => {
  it('plans the latest report per timeframe, or the named reports, before anything is built', () => {
    const latest = flowCatalogue.plan('aggregated_report_v1', {
      symbol: 'BTC-USDT',
      timeframes: ['1d', '1w'],
    });
    expect(latest.needs).toEqual({
      marketData: [
        { symbol: 'BTC-USDT', timeframe: '1w' },
        { symbol: 'BTC-USDT', timeframe: '1d' },
      ],
      reports: { symbol: 'BTC-USDT', timeframes: ['1w', '1d'] },
    });
    const named = flowCatalogue.plan('aggregated_report_v1', {
      symbol: 'BTC-USDT',
      reportIds: [ref('1d', 'a').reportId],
    });
    expect(named.needs.reports).toMatchObject({ reportIds: [ref('1d', 'a').reportId] });
    expect(named.needs.reports?.timeframes).toHaveLength(5);
  });

  it('builds one LLM_REPORT over the resolved refs, longest timeframe first', () => {
    const run = createRun(
      input({
        symbol: 'BTC-USDT',
        asOf: '2026-09-20T00:00:00Z',
        reportRefs: [ref('1d', 'b'), ref('1M', 'c'), ref('4h', 'a')],
      }),
    );
    const checked = validate.flowRun(run);
    expect(checked.ok ? [] : checked.issues).toEqual([]);
    expect(Object.keys(run.steps)).toEqual([STEP]);
    const step = run.steps[STEP];
    expect(step?.timeframe).toBeUndefined();
    expect(step?.dependsOn).toEqual([]);
    expect(step?.inputs).toMatchObject({
      reportRefs: [ref('1M', 'c'), ref('1d', 'b'), ref('4h', 'a')],
      llm: {
        promptId: 'prompt_aggregate_v1',
        llmProfile: { structuredOutput: { schemaId: 'llm_aggregate_report_output_v1' } },
      },
    });
  });

  it('refuses bad reportIds and a build without resolved refs', () => {
    for (const reportIds of [[], ['nope'], [ref('1d', 'a').reportId, ref('1d', 'a').reportId]]) {
      expect(() =>
        flowCatalogue.plan('aggregated_report_v1', { symbol: 'BTC-USDT', reportIds }),
      ).toThrow(InvalidRequestError);
    }
    expect(() => createRun(input({ symbol: 'BTC-USDT' }))).toThrow(FlowRunInvalidError);
  });
});
