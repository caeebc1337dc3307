import { validate, type ApiError, type FlowRun } from '@tda/contracts';
import { BundledCandleSource } from '@tda/market-data';
import { makeReportEntry } from '@tda/report-index/testing';
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
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({
      code: 'INVALID_REQUEST',
      message: expect.stringMatching(/DOGE-USDT/),
      details: { field: 'scope.symbol' },
    });
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

describe('trigger preflight: references (flow 4 account, flow 3 reports)', () => {
  let orc: TestOrchestrator | undefined;

  afterEach(async () => {
    await orc?.close();
    orc = undefined;
  });

  const reco = (accountId: string, owner?: string) => ({
    body: { flowKey: 'recommendation_with_account_v1', scope: { symbol: 'BTC-USDT', accountId } },
    ...(owner === undefined ? {} : { headers: { 'X-TDA-Owner': owner } }),
  });

  it('refuses an unknown or foreign account with a 404 and writes nothing', async () => {
    orc = await startTestOrchestrator();
    const created = await orc.request('POST', '/accounts', {
      body: { accountId: 'alice-paper', quoteCurrency: 'USDT', cash: 1000 },
      headers: { 'X-TDA-Owner': 'alice' },
    });
    expect(created.status).toBe(201);
    const unknown = await orc.request('POST', '/runs', reco('nobody', 'alice'));
    const foreign = await orc.request('POST', '/runs', reco('alice-paper', 'bob'));
    for (const res of [unknown, foreign]) {
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ code: 'NOT_FOUND', details: { field: 'scope.accountId' } });
    }
    const own = await orc.request('POST', '/runs', reco('alice-paper', 'alice'));
    expect(own.status).toBe(201);
    const runs = await orc.request('GET', '/runs', { headers: { 'X-TDA-Owner': 'alice' } });
    expect((runs.body as { runs: unknown[] }).runs).toHaveLength(1);
  });

  const aggregate = (scope: Record<string, unknown>, owner = 'alice') => ({
    body: { flowKey: 'aggregated_report_v1', scope: { symbol: 'BTC/USDT', ...scope } },
    headers: { 'X-TDA-Owner': owner },
  });

  async function seedReports(o: TestOrchestrator) {
    const entries = {
      week: makeReportEntry({ variant: 'w', timeframe: '1w', asOf: '2026-09-14T00:00:00.000Z' }),
      dayOld: makeReportEntry({ variant: 'd1', timeframe: '1d', asOf: '2026-09-18T00:00:00.000Z' }),
      day: makeReportEntry({ variant: 'd2', timeframe: '1d', asOf: '2026-09-19T00:00:00.000Z' }),
      later: makeReportEntry({ variant: 'l', timeframe: '4h', asOf: '2026-09-20T00:00:00.000Z' }),
      eth: makeReportEntry({ variant: 'e', symbol: 'ETH-USDT', symbolKey: 'ETHUSDT' }),
      bobs: makeReportEntry({ variant: 'b', ownerId: 'bob' }),
    };
    for (const entry of Object.values(entries)) await o.reportIndex.createReport(entry);
    return entries;
  }

  it('resolves the latest report per timeframe at or before asOf into scope.reportRefs', async () => {
    orc = await startTestOrchestrator();
    const e = await seedReports(orc);
    const res = await orc.request(
      'POST',
      '/runs',
      aggregate({ asOf: '2026-09-19T12:00:00Z', timeframes: ['1w', '1d', '4h'] }),
    );
    expect(res.status).toBe(201);
    const run = res.body as FlowRun;
    const refs = (run.scope['reportRefs'] as { reportId: string }[]).map((r) => r.reportId);
    expect(refs).toEqual([e.week.reportId, e.day.reportId]);
    const [step] = Object.values(run.steps);
    expect(step?.inputs['reportRefs']).toEqual(run.scope['reportRefs']);
  });

  it('refuses unknown, foreign, other-symbol and later reports, naming them', async () => {
    orc = await startTestOrchestrator();
    const e = await seedReports(orc);
    const missing = await orc.request(
      'POST',
      '/runs',
      aggregate({ reportIds: [e.day.reportId, e.bobs.reportId, 'rpt_000000000000000000000000'] }),
    );
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({
      details: { reportIds: [e.bobs.reportId, 'rpt_000000000000000000000000'] },
    });
    const unusable = await orc.request(
      'POST',
      '/runs',
      aggregate({
        asOf: '2026-09-19T12:00:00Z',
        reportIds: [e.day.reportId, e.eth.reportId, e.later.reportId],
      }),
    );
    expect(unusable.status).toBe(422);
    expect(unusable.body).toMatchObject({
      code: 'INVALID_REFERENCE',
      details: {
        reports: [
          { reportId: e.eth.reportId, reason: 'symbol ETH-USDT' },
          { reportId: e.later.reportId, reason: expect.stringMatching(/after the run's/) },
        ],
      },
    });
    const none = await orc.request('POST', '/runs', aggregate({ timeframes: ['1h'] }));
    expect(none.status).toBe(422);
    const forged = await orc.request(
      'POST',
      '/runs',
      aggregate({ reportRefs: [{ reportId: e.bobs.reportId }] }),
    );
    expect(forged.status).toBe(400);
    expect((await orc.request('GET', '/runs')).body).toMatchObject({ runs: [] });
  });
});
