import { TIMEFRAMES, type FlowRun } from '@tda/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectValidArtifacts } from './testing/artifact-checks';
import { startE2eStack, waitForRunStatus, type E2eStack } from './testing/e2e-stack';

/**
 * One as-of time per run (DESIGN §2), end to end: for both bundled symbols and every timeframe,
 * no artifact of a run holds data after its asOf — with the default asOf (the newest moment
 * every timeframe reaches: 2026-09-20T00:00:00Z for the bundled data) and with a requested one.
 */
describe('one asOf per run (emulators)', () => {
  let h: E2eStack;
  beforeAll(async () => {
    h = await startE2eStack({ name: 'asof' });
  });
  afterAll(async () => {
    await h?.stack.close();
  });

  async function chartsRun(symbol: string, asOf?: string): Promise<FlowRun> {
    const { run } = await h.api.trigger({
      flowKey: 'market_charts_v1',
      scope: { symbol, timeframes: [...TIMEFRAMES], ...(asOf === undefined ? {} : { asOf }) },
    });
    return waitForRunStatus(h.api, run.runId, 'SUCCEEDED', 60_000);
  }

  it.each([
    ['BTC-USDT', undefined, '2026-09-20T00:00:00Z'],
    ['ETH-USDT', undefined, '2026-09-20T00:00:00Z'],
    ['BTC-USDT', '2026-06-15T13:00:00Z', '2026-06-15T13:00:00Z'],
    ['ETH-USDT', '2026-06-15T13:00:00Z', '2026-06-15T13:00:00Z'],
  ])(
    '%s, asOf %s: every timeframe cut at %s',
    async (symbol, requested, expected) => {
      const run = await chartsRun(symbol, requested);
      expect(run.scope.asOf).toBe(expected);
      expect(Object.keys(run.steps)).toHaveLength(2 * TIMEFRAMES.length);
      await expectValidArtifacts(h.stack, run);
    },
    90_000,
  );

  it('refuses an asOf before the hourly data with a 400 naming the timeframe and range', async () => {
    const error = await h.api
      .trigger({
        flowKey: 'market_charts_v1',
        scope: { symbol: 'BTC-USDT', timeframes: ['1M', '1h'], asOf: '2025-01-01T00:00:00Z' },
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toMatchObject({
      status: 400,
      code: 'INVALID_REQUEST',
      details: { timeframe: '1h', field: 'scope.asOf' },
    });
  });
});
