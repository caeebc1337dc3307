import { scopeSchema } from './scope-schema';
import { validate, type FlowRun } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import { advance } from '../advance';
import { findGraphIssues, topologicalOrder } from '../dag';
import { FlowRunInvalidError, InvalidRequestError, UnknownFlowKeyError } from '../errors';
import { isValidRunId } from '../ids';
import { seededRandom, T0 } from '../testing/run-fixtures';
import {
  createRun,
  FlowCatalogue,
  getFlow,
  listFlows,
  validateFlowDefinition,
  type CreateRunInput,
} from './flow-catalogue';
import type { FlowDefinition } from './flow-definition';

const base = (overrides: Partial<CreateRunInput> = {}): CreateRunInput => ({
  flowKey: 'scheduled_month_week_report_v1',
  scope: { symbol: 'BTC/USDT' },
  ownerId: 'user-1',
  trigger: { type: 'SCHEDULER', source: 'cloud-scheduler/monthly' },
  now: T0,
  random: seededRandom(7),
  ...overrides,
});

function expectValid(run: FlowRun): void {
  const result = validate.flowRun(run);
  expect(result.ok ? [] : result.issues).toEqual([]);
}

function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

const MONTH = 'llm_report:1M:prompt_month_v1:model_gemini_2_5_flash';
const WEEK = 'llm_report:1w:prompt_week_v1:model_gemini_2_5_flash';

/** Scope fields a flow requires beyond the symbol. */
function extra(flowKey: string): Record<string, unknown> {
  if (flowKey.startsWith('recommendation_with_')) return { accountId: 'demo' };
  if (flowKey === 'aggregated_report_v1') return { reportRefs: [AGGREGATE_REF] };
  if (flowKey === 'backtest_v1') {
    return {
      strategy: { kind: 'rsi_reversion', params: { period: [14], lower: [30], upper: [70] } },
    };
  }
  return {};
}

const AGGREGATE_REF = {
  reportId: 'rpt_0123456789abcdef01234567',
  gcsUri: 'gs://tda-artifacts/runs/20260920-000000_ETH-USD_abc12/1d/report.json',
  runId: '20260920-000000_ETH-USD_abc12',
  stepId: 'llm_report:1d:prompt_multi_tf_v1:model_gemini_2_5_flash',
  timeframe: '1d',
  asOf: '2026-09-20T00:00:00Z',
};

describe('flow catalogue', () => {
  it('lists the registered flows', () => {
    expect(listFlows().map((f) => f.flowKey)).toEqual([
      'aggregated_report_v1',
      'backtest_v1',
      'market_charts_v1',
      'recommendation_with_account_v1',
      'recommendation_with_indicators_v1',
      'recommendation_with_news_v1',
      'scheduled_month_week_report_v1',
      'user_multi_tf_report_v1',
    ]);
    expect(getFlow('user_multi_tf_report_v1').description).not.toBe('');
  });

  it('rejects an unknown flowKey with INVALID_REQUEST listing the available keys', () => {
    const error = caught(() => createRun(base({ flowKey: 'nope_v1' })));
    expect(error).toBeInstanceOf(UnknownFlowKeyError);
    expect(error).toMatchObject({
      code: 'INVALID_REQUEST',
      details: {
        flowKey: 'nope_v1',
        availableFlowKeys: [
          'aggregated_report_v1',
          'backtest_v1',
          'market_charts_v1',
          'recommendation_with_account_v1',
          'recommendation_with_indicators_v1',
          'recommendation_with_news_v1',
          'scheduled_month_week_report_v1',
          'user_multi_tf_report_v1',
        ],
      },
    });
  });

  it('refuses duplicate or badly named flow keys at registration', () => {
    const flow = getFlow('user_multi_tf_report_v1');
    expect(() => new FlowCatalogue([flow, flow])).toThrow(FlowRunInvalidError);
    expect(() => new FlowCatalogue([{ ...flow, flowKey: 'NoVersion' }])).toThrow(
      FlowRunInvalidError,
    );
  });

  it('validates every registered flow definition for its default scope', () => {
    for (const { flowKey } of listFlows()) {
      const specs = validateFlowDefinition(getFlow(flowKey), {
        symbol: 'ETH-USD',
        ...extra(flowKey),
      });
      expect(findGraphIssues(specs)).toEqual([]);
    }
  });

  it('rejects a definition that builds an invalid graph', () => {
    const broken: FlowDefinition = {
      flowKey: 'broken_v1',
      description: 'cycle',
      scopeSchema: scopeSchema(['symbol'], { required: ['symbol'] }),
      resolveScope: (s) => s,
      build: () => ({
        'news_export:a': { stepType: 'NEWS_EXPORT', dependsOn: ['news_export:b'], inputs: {} },
        'news_export:b': { stepType: 'NEWS_EXPORT', dependsOn: ['news_export:a'], inputs: {} },
      }),
    };
    expect(caught(() => validateFlowDefinition(broken, { symbol: 'BTCUSDT' }))).toMatchObject({
      code: 'FLOW_RUN_INVALID',
      details: { reason: 'cycle' },
    });
    expect(() => new FlowCatalogue([broken]).createRun(base({ flowKey: 'broken_v1' }))).toThrow(
      FlowRunInvalidError,
    );
  });
});

describe('createRun: scheduled_month_week_report_v1 (flow 1, seed 001)', () => {
  const run = createRun(base({ idempotencyKey: 'sched-2025-01', deadlineSeconds: 3600 }));

  it('builds a complete, contract-valid PENDING run', () => {
    expectValid(run);
    expect(isValidRunId(run.runId)).toBe(true);
    expect(run.runId).toMatch(/^20250115-100000_BTC-USDT_[a-z0-9]{5}$/);
    expect(run).toMatchObject({
      schemaVersion: 1,
      flowKey: 'scheduled_month_week_report_v1',
      status: 'PENDING',
      createdAt: T0.toISOString(),
      updatedAt: T0.toISOString(),
      ownerId: 'user-1',
      idempotencyKey: 'sched-2025-01',
      deadlineAt: '2025-01-15T11:00:00.000Z',
      scope: { symbol: 'BTC/USDT', timeframes: ['1M', '1w'], modelName: 'gemini-2.5-flash' },
      progress: {
        total: 6,
        pending: 6,
        ready: 0,
        running: 0,
        succeeded: 0,
        failed: 0,
        skipped: 0,
        cancelled: 0,
      },
    });
    for (const step of Object.values(run.steps)) {
      expect(step).toMatchObject({
        status: 'PENDING',
        attempt: 0,
        outputs: {},
        createdAt: T0.toISOString(),
      });
      expect(step.timeframe).toBeDefined();
    }
  });

  it('has the seed 001 steps and dependencies', () => {
    const deps = Object.fromEntries(
      Object.entries(run.steps).map(([id, s]) => [id, [s.stepType, s.timeframe, s.dependsOn]]),
    );
    expect(deps).toEqual({
      'ohlcv_export:1M': ['OHLCV_EXPORT', '1M', []],
      'ohlcv_export:1w': ['OHLCV_EXPORT', '1w', []],
      'charts:1M:ctpl_default_v1': ['CHART_EXPORT', '1M', ['ohlcv_export:1M']],
      'charts:1w:ctpl_default_v1': ['CHART_EXPORT', '1w', ['ohlcv_export:1w']],
      [MONTH]: ['LLM_REPORT', '1M', ['ohlcv_export:1M', 'charts:1M:ctpl_default_v1']],
      [WEEK]: ['LLM_REPORT', '1w', ['ohlcv_export:1w', 'charts:1w:ctpl_default_v1', MONTH]],
    });
  });

  it('fills the step inputs (seed 002 LLM_REPORT contract)', () => {
    expect(run.steps['ohlcv_export:1w']?.inputs).toEqual({
      symbol: 'BTC/USDT',
      timeframe: '1w',
      lookback: 104,
    });
    expect(run.steps['charts:1M:ctpl_default_v1']?.inputs).toEqual({
      ohlcvStepId: 'ohlcv_export:1M',
      chartTemplateId: 'ctpl_default_v1',
      minImages: 1,
      requests: [{ chartTemplateId: 'ctpl_default_v1', kind: 'candlestick' }],
    });
    const llm = {
      promptId: 'prompt_month_v1',
      llmProfile: {
        modelName: 'gemini-2.5-flash',
        temperature: 0.2,
        maxOutputTokens: 8192,
        candidateCount: 1,
        responseMimeType: 'application/json',
        structuredOutput: { schemaId: 'llm_report_output_v1' },
      },
    };
    expect(run.steps[MONTH]?.inputs).toEqual({
      ohlcvStepId: 'ohlcv_export:1M',
      chartsManifestStepId: 'charts:1M:ctpl_default_v1',
      llm,
    });
    expect(run.steps[WEEK]?.inputs).toEqual({
      ohlcvStepId: 'ohlcv_export:1w',
      chartsManifestStepId: 'charts:1w:ctpl_default_v1',
      previousReportStepIds: [MONTH],
      llm: { ...llm, promptId: 'prompt_week_v1' },
    });
  });

  it('derives the model variant from scope.modelName and applies LLM knobs', () => {
    const custom = createRun(
      base({
        scope: { symbol: 'ETHUSDT', modelName: 'gemini-2.5-pro', temperature: 0.7, lookback: 50 },
      }),
    );
    expectValid(custom);
    const report = custom.steps['llm_report:1M:prompt_month_v1:model_gemini_2_5_pro'];
    expect(report?.inputs['llm']).toMatchObject({
      llmProfile: { modelName: 'gemini-2.5-pro', temperature: 0.7 },
    });
    expect(custom.steps['ohlcv_export:1M']?.inputs['lookback']).toBe(50);
  });

  it('advances to READY OHLCV steps first', () => {
    expect(advance(run, T0).newlyReady).toEqual(['ohlcv_export:1M', 'ohlcv_export:1w']);
  });

  it('is deterministic apart from the runId suffix', () => {
    const again = createRun(
      base({ idempotencyKey: 'sched-2025-01', deadlineSeconds: 3600, random: seededRandom(99) }),
    );
    expect({ ...again, runId: run.runId }).toEqual(run);
  });
});

describe('createRun: user_multi_tf_report_v1 (flow 2)', () => {
  it('defaults to 1d, 4h, 1h, chaining each report to the next longer timeframe', () => {
    const run = createRun(
      base({ flowKey: 'user_multi_tf_report_v1', trigger: { type: 'USER', source: 'POST /runs' } }),
    );
    expectValid(run);
    expect(Object.keys(run.steps)).toHaveLength(9);
    const r = (tf: string) => `llm_report:${tf}:prompt_multi_tf_v1:model_gemini_2_5_flash`;
    expect(run.steps[r('1d')]?.dependsOn).toEqual(['ohlcv_export:1d', 'charts:1d:ctpl_default_v1']);
    expect(run.steps[r('4h')]?.dependsOn).toEqual([
      'ohlcv_export:4h',
      'charts:4h:ctpl_default_v1',
      r('1d'),
    ]);
    expect(run.steps[r('1h')]?.dependsOn).toEqual([
      'ohlcv_export:1h',
      'charts:1h:ctpl_default_v1',
      r('4h'),
    ]);
    expect(run.steps[r('1h')]?.inputs['previousReportStepIds']).toEqual([r('4h')]);
    expect(run.steps[r('1d')]?.inputs).not.toHaveProperty('previousReportStepIds');
    const order = topologicalOrder(run.steps);
    expect(order.indexOf(r('1d'))).toBeLessThan(order.indexOf(r('4h')));
  });

  it('orders user timeframes from the longest to the shortest', () => {
    const run = createRun(
      base({
        flowKey: 'user_multi_tf_report_v1',
        scope: { symbol: 'BTC-USD', timeframes: ['1h', '1M'] },
      }),
    );
    expectValid(run);
    expect(run.scope.timeframes).toEqual(['1M', '1h']);
    expect(
      run.steps['llm_report:1h:prompt_multi_tf_v1:model_gemini_2_5_flash']?.dependsOn,
    ).toContain('llm_report:1M:prompt_multi_tf_v1:model_gemini_2_5_flash');
  });
});

describe('createRun: invalid requests', () => {
  it.each([
    [
      'unsupported timeframe',
      {
        flowKey: 'user_multi_tf_report_v1',
        scope: { symbol: 'BTCUSDT', timeframes: ['1d', '15m'] },
      },
      { unsupported: ['15m'] },
    ],
    [
      'duplicate timeframes',
      {
        flowKey: 'user_multi_tf_report_v1',
        scope: { symbol: 'BTCUSDT', timeframes: ['1d', '1d'] },
      },
      { duplicates: ['1d'] },
    ],
    [
      'empty timeframes',
      { flowKey: 'user_multi_tf_report_v1', scope: { symbol: 'BTCUSDT', timeframes: [] } },
      { field: 'scope.timeframes' },
    ],
    [
      'flow 1 timeframes are fixed',
      { scope: { symbol: 'BTCUSDT', timeframes: ['1d'] } },
      { field: 'scope.timeframes' },
    ],
    ['bad symbol', { scope: { symbol: 'BTC USDT' } }, { field: 'scope.symbol' }],
    [
      'unknown scope field',
      { scope: { symbol: 'BTCUSDT', timeframe: '1d' } },
      { unknownFields: ['timeframe'] },
    ],
    [
      'bad temperature',
      { scope: { symbol: 'BTCUSDT', temperature: 3 } },
      { field: 'scope.temperature' },
    ],
    [
      'bad model name',
      { scope: { symbol: 'BTCUSDT', modelName: 'has space' } },
      { field: 'scope.modelName' },
    ],
    ['blank owner', { ownerId: ' ' }, { field: 'ownerId' }],
    ['bad trigger', { trigger: { type: 'CRON', source: 'x' } as never }, { field: 'trigger.type' }],
    ['bad deadline', { deadlineSeconds: 0 }, { field: 'deadlineSeconds' }],
  ] as const)('%s -> INVALID_REQUEST with details', (_name, overrides, details) => {
    const error = caught(() => createRun(base(overrides as Partial<CreateRunInput>)));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error).toMatchObject({ code: 'INVALID_REQUEST', details });
  });
});
