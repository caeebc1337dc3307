import { validate } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../errors';
import { seededRandom, T0 } from '../testing/run-fixtures';
import { createRun, listFlows } from './flow-catalogue';

const trigger = { type: 'USER' as const, source: 'test' };

describe('market_charts_v1', () => {
  it('builds OHLCV -> charts per timeframe (default 1M and 1w) and no LLM step', () => {
    const run = createRun({
      flowKey: 'market_charts_v1',
      scope: { symbol: 'btc/usdt' },
      ownerId: 'u',
      trigger,
      now: T0,
      random: seededRandom(1),
    });
    expect(validate.flowRun(run).ok).toBe(true);
    expect(run.scope).toEqual({ symbol: 'btc/usdt', timeframes: ['1M', '1w'] });
    expect(run.runId).toMatch(/_BTC-USDT_/);
    expect(Object.keys(run.steps).sort()).toEqual([
      'charts:1M:ctpl_default_v1',
      'charts:1w:ctpl_default_v1',
      'ohlcv_export:1M',
      'ohlcv_export:1w',
    ]);
    expect(run.steps['charts:1w:ctpl_default_v1']).toMatchObject({
      stepType: 'CHART_EXPORT',
      dependsOn: ['ohlcv_export:1w'],
      inputs: { ohlcvStepId: 'ohlcv_export:1w', minImages: 1 },
    });
    expect(run.steps['ohlcv_export:1M']?.inputs).toMatchObject({ timeframe: '1M', lookback: 60 });
  });

  it('takes user timeframes and a lookback, and rejects unknown scope fields', () => {
    const run = createRun({
      flowKey: 'market_charts_v1',
      scope: { symbol: 'ETH-USDT', timeframes: ['1h', '1d'], lookback: 50 },
      ownerId: 'u',
      trigger,
      now: T0,
      random: seededRandom(2),
    });
    expect(run.steps['ohlcv_export:1h']?.inputs).toMatchObject({ lookback: 50 });
    expect(() =>
      createRun({
        flowKey: 'market_charts_v1',
        scope: { symbol: 'ETH-USDT', modelName: 'x' },
        ownerId: 'u',
        trigger,
        now: T0,
        random: seededRandom(2),
      }),
    ).toThrow(InvalidRequestError);
  });

  it('is listed in the catalogue', () => {
    expect(listFlows().map((f) => f.flowKey)).toContain('market_charts_v1');
  });
});
