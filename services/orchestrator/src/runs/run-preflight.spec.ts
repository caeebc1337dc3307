import { validate, type ApiError, type FlowRun } from '@tda/contracts';
import { BundledCandleSource } from '@tda/market-data';
import { afterEach, describe, expect, it } from 'vitest';
import {
  anyMarketCoverage,
  startTestOrchestrator,
  type TestOrchestrator,
} from '../testing/orchestrator.harness';
import type { MarketCoverage } from './run-preflight.service';

const FLOW = { flowKey: 'user_multi_tf_report_v1', scope: { symbol: 'BTC-USDT' } };

/** A market whose end moves: the default asOf of each trigger is the current `end`. */
class MovingMarket implements MarketCoverage {
  end = '2026-09-20T00:00:00Z';
  calls: string[] = [];

  coverage: MarketCoverage['coverage'] = async (symbol, timeframe) => {
    this.calls.push(`${symbol} ${timeframe}`);
    return anyMarketCoverage(this.end).coverage(symbol, timeframe);
  };
}

describe('trigger preflight: one asOf per run', () => {
  let orc: TestOrchestrator | undefined;

  afterEach(async () => {
    await orc?.close();
    orc = undefined;
  });

  async function trigger(body: unknown): Promise<{ status: number; body: unknown }> {
    if (orc === undefined) throw new Error('start the orchestrator first');
    return orc.request('POST', '/runs', { body });
  }

  it('fixes the default asOf: the newest moment every timeframe of the bundled data reaches', async () => {
    orc = await startTestOrchestrator({ marketData: new BundledCandleSource() });
    for (const symbol of ['BTC-USDT', 'ETH/USDT']) {
      const res = await trigger({ ...FLOW, scope: { symbol, timeframes: ['1M', '1w', '1h'] } });
      expect(res.status).toBe(201);
      const run = res.body as FlowRun;
      expect(validate.flowRun(run).ok).toBe(true);
      expect(run.scope.asOf).toBe('2026-09-20T00:00:00Z');
    }
  });

  it('refuses an asOf a timeframe cannot reach, naming it and the available range', async () => {
    orc = await startTestOrchestrator({ marketData: new BundledCandleSource() });
    const res = await trigger({
      ...FLOW,
      scope: { symbol: 'BTC-USDT', timeframes: ['1d', '1h'], asOf: '2025-06-01T00:00:00Z' },
    });
    expect(res.status).toBe(400);
    const error = res.body as ApiError;
    expect(error.code).toBe('INVALID_REQUEST');
    expect(error.message).toMatch(/1h/);
    expect(error.details).toMatchObject({
      field: 'scope.asOf',
      timeframe: '1h',
      available: { from: '2026-02-24T04:00:00Z', to: '2026-09-20T11:00:00Z' },
    });
    expect((await orc.request('GET', '/runs')).body).toMatchObject({ runs: [] });
  });

  it('keeps a requested asOf (normalized) and refuses an unknown symbol before writing', async () => {
    orc = await startTestOrchestrator({ marketData: new BundledCandleSource() });
    const ok = await trigger({
      ...FLOW,
      scope: { symbol: 'ETH-USDT', timeframes: ['4h'], asOf: '2026-06-15T13:00:00.000Z' },
    });
    expect(ok.status).toBe(201);
    expect((ok.body as FlowRun).scope.asOf).toBe('2026-06-15T13:00:00Z');
    const unknown = await trigger({ ...FLOW, scope: { symbol: 'DOGE-USDT' } });
    expect(unknown.status).toBeGreaterThanOrEqual(400);
    expect(unknown.status).toBeLessThan(500);
    expect((unknown.body as ApiError).message).toMatch(/DOGE-USDT/);
  });

  it('answers a retried trigger with the first run although the default asOf moved on', async () => {
    const market = new MovingMarket();
    orc = await startTestOrchestrator({ marketData: market });
    const body = { ...FLOW, idempotencyKey: 'retry-me' };
    const first = await trigger(body);
    market.end = '2026-09-21T00:00:00Z';
    const again = await trigger(body);
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect((again.body as FlowRun).runId).toBe((first.body as FlowRun).runId);
    expect((again.body as FlowRun).scope.asOf).toBe('2026-09-20T00:00:00Z');
    const pinned = await trigger({
      ...body,
      scope: { ...FLOW.scope, asOf: '2026-09-19T00:00:00Z' },
    });
    expect(pinned.status).toBe(409);
    expect(market.calls).toEqual(['BTC-USDT 1d', 'BTC-USDT 1h', 'BTC-USDT 4h']);
  });
});
