import { validate, type FlowRun } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import { advance } from '../advance';
import { InvalidRequestError } from '../errors';
import { seededRandom, T0 } from '../testing/run-fixtures';
import { createRun, type CreateRunInput } from './flow-catalogue';
import { marketDataNeeds } from './market-data-needs';
import { readAsOf } from './scope';

const input = (scope: CreateRunInput['scope']): CreateRunInput => ({
  flowKey: 'recommendation_with_account_v1',
  scope,
  ownerId: 'user-1',
  trigger: { type: 'USER', source: 'test' },
  now: T0,
  random: seededRandom(3),
});

const RECO = 'llm_reco:prompt_reco_v1:model_gemini_2_5_flash';
const report = (tf: string): string => `llm_report:${tf}:prompt_multi_tf_v1:model_gemini_2_5_flash`;

function expectValid(run: FlowRun): void {
  const checked = validate.flowRun(run);
  expect(checked.ok ? [] : checked.issues).toEqual([]);
}

describe('recommendation_with_account_v1 (flow 4)', () => {
  const run = createRun(
    input({ symbol: 'BTC-USDT', accountId: 'demo', asOf: '2026-09-20T02:00:00+02:00' }),
  );

  it('builds the flow 2 reports, the account snapshot and one recommendation', () => {
    expectValid(run);
    expect(run.scope).toMatchObject({
      symbol: 'BTC-USDT',
      accountId: 'demo',
      asOf: '2026-09-20T00:00:00Z',
      timeframes: ['1w', '1d', '4h'],
    });
    expect(Object.keys(run.steps)).toHaveLength(11);
    expect(run.steps['account_export']).toMatchObject({
      stepType: 'ACCOUNT_EXPORT',
      dependsOn: [],
      inputs: { accountId: 'demo', symbol: 'BTC-USDT' },
    });
    expect(run.steps[report('1d')]?.dependsOn).toContain(report('1w'));
    expect(run.steps[RECO]).toMatchObject({
      stepType: 'LLM_RECOMMENDATION',
      dependsOn: ['ohlcv_export:4h', report('1w'), report('1d'), report('4h'), 'account_export'],
      inputs: {
        ohlcvStepId: 'ohlcv_export:4h',
        reportStepIds: [report('1w'), report('1d'), report('4h')],
        accountStepId: 'account_export',
        llm: {
          promptId: 'prompt_reco_v1',
          llmProfile: { structuredOutput: { schemaId: 'llm_recommendation_output_v1' } },
        },
      },
    });
  });

  it('starts with the OHLCV steps and the account snapshot', () => {
    expect(advance(run, T0).newlyReady).toEqual([
      'account_export',
      'ohlcv_export:1d',
      'ohlcv_export:1w',
      'ohlcv_export:4h',
    ]);
  });

  it('needs the candles of every timeframe of the run', () => {
    expect(marketDataNeeds(run)).toEqual([
      { symbol: 'BTC-USDT', timeframe: '1d' },
      { symbol: 'BTC-USDT', timeframe: '1w' },
      { symbol: 'BTC-USDT', timeframe: '4h' },
    ]);
  });

  it('refuses a run without an account, with a bad asOf or an unknown field', () => {
    expect(() => createRun(input({ symbol: 'BTC-USDT' }))).toThrow(InvalidRequestError);
    expect(() =>
      createRun(input({ symbol: 'BTC-USDT', accountId: 'demo', asOf: 'yesterday' })),
    ).toThrow(/scope.asOf must be an RFC 3339 time/);
    expect(() => createRun(input({ symbol: 'BTC-USDT', accountId: 'demo', acount: 'x' }))).toThrow(
      /unknown scope field\(s\): acount/,
    );
  });
});

describe('readAsOf', () => {
  it('normalizes offsets and milliseconds to UTC seconds', () => {
    expect(readAsOf({ symbol: 'X', asOf: '2026-09-19T20:00:00-04:00' })).toBe(
      '2026-09-20T00:00:00Z',
    );
    expect(readAsOf({ symbol: 'X', asOf: '2026-09-20T00:00:00.250Z' })).toBe(
      '2026-09-20T00:00:00.250Z',
    );
    expect(readAsOf({ symbol: 'X' })).toBeUndefined();
  });

  it('refuses what is not an RFC 3339 time', () => {
    for (const asOf of ['2026-09-20', '2026-13-01T00:00:00Z', 1_700_000_000, 'now']) {
      expect(() => readAsOf({ symbol: 'X', asOf } as never)).toThrow(InvalidRequestError);
    }
  });
});
