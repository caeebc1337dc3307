import type { FlowRun } from '@tda/contracts';
import { recommendationIdFor, reportIdFor } from '@tda/flow-engine';
import { InMemoryReportIndexStore } from '@tda/report-index';
import { makeRecommendationEntry, makeReportEntry } from '@tda/report-index/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  artifactUriOf,
  RECO_STEP,
  recommendationFileFor,
  REPORT_STEP,
  reportFileFor,
  runWithLlmSteps,
} from '../testing/index.fixtures';
import { startTestOrchestrator, type TestOrchestrator } from '../testing/orchestrator.harness';

const ALICE = { 'X-TDA-Owner': 'alice' };
const BOB = { 'X-TDA-Owner': 'bob' };

describe('GET /reports, /recommendations', () => {
  let orc: TestOrchestrator;
  const index = new InMemoryReportIndexStore();
  const reports = [
    makeReportEntry({ variant: 'a', timeframe: '1d', asOf: '2026-09-19T00:00:00.000Z' }),
    makeReportEntry({ variant: 'b', timeframe: '1w', asOf: '2026-09-20T00:00:00.000Z' }),
    makeReportEntry({
      variant: 'c',
      symbol: 'ETH-USDT',
      symbolKey: 'ETHUSDT',
      asOf: '2026-09-18T00:00:00.000Z',
    }),
  ];
  const bobs = makeReportEntry({ variant: 'bob', ownerId: 'bob' });
  const recos = [
    makeRecommendationEntry({ variant: 'a', signal_strength: 0.4 }),
    makeRecommendationEntry({
      variant: 'b',
      signal_strength: 0.8,
      asOf: '2026-09-21T00:00:00.000Z',
    }),
  ];

  beforeAll(async () => {
    for (const entry of [...reports, bobs]) await index.createReport(entry);
    for (const entry of recos) await index.createRecommendation(entry);
    orc = await startTestOrchestrator({ reportIndex: index });
  });
  afterAll(() => orc.close());

  it('lists the owner’s reports newest first, by symbol in any spelling and by timeframe', async () => {
    const all = await orc.request('GET', '/reports', { headers: ALICE });
    expect(all.status).toBe(200);
    const ids = (body: unknown): string[] =>
      (body as { reports: { reportId: string }[] }).reports.map((r) => r.reportId);
    expect(ids(all.body)).toEqual([reports[1], reports[0], reports[2]].map((r) => r?.reportId));
    for (const symbol of ['BTC-USDT', 'btc/usdt', 'BTCUSDT']) {
      const page = await orc.request('GET', `/reports?symbol=${encodeURIComponent(symbol)}`, {
        headers: ALICE,
      });
      expect(ids(page.body)).toEqual([reports[1]?.reportId, reports[0]?.reportId]);
    }
    const weekly = await orc.request('GET', '/reports?timeframe=1w', { headers: ALICE });
    expect(ids(weekly.body)).toEqual([reports[1]?.reportId]);
    const asOf = await orc.request('GET', '/reports?asOf=2026-09-19T00:00:00Z&limit=1', {
      headers: ALICE,
    });
    expect(asOf.body).toMatchObject({ reports: [{ reportId: reports[0]?.reportId }] });
  });

  it('pages with nextCursor', async () => {
    const first = await orc.request('GET', '/reports?limit=2', { headers: ALICE });
    const { nextCursor } = first.body as { nextCursor: string };
    expect(nextCursor).toEqual(expect.any(String));
    const second = await orc.request('GET', `/reports?limit=2&cursor=${nextCursor}`, {
      headers: ALICE,
    });
    expect(second.body).toEqual({ reports: [reports[2]], nextCursor: null });
  });

  it('reads one entry of the owner; another owner’s or an unknown one is a 404', async () => {
    const target = reports[0];
    if (target === undefined) throw new Error('fixture');
    const mine = await orc.request('GET', `/reports/${target.reportId}`, { headers: ALICE });
    expect(mine).toMatchObject({ status: 200, body: target });
    const theirs = await orc.request('GET', `/reports/${target.reportId}`, { headers: BOB });
    expect(theirs).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });
    const unknown = await orc.request('GET', '/reports/rpt_000000000000000000000000', {
      headers: ALICE,
    });
    expect(unknown.status).toBe(404);
    const bob = await orc.request('GET', '/reports', { headers: BOB });
    expect(bob.body).toEqual({ reports: [bobs], nextCursor: null });
    // Without the header: the default owner, who has none here.
    expect((await orc.request('GET', '/reports')).body).toEqual({ reports: [], nextCursor: null });
  });

  it('lists and reads recommendations, filtered by minStrength', async () => {
    const strong = await orc.request('GET', '/recommendations?minStrength=0.5', { headers: ALICE });
    expect(strong.body).toEqual({ recommendations: [recos[1]], nextCursor: null });
    const all = await orc.request('GET', '/recommendations?symbol=BTC-USDT', { headers: ALICE });
    expect((all.body as { recommendations: unknown[] }).recommendations).toHaveLength(2);
    const id = recos[0]?.recoId ?? '';
    expect((await orc.request('GET', `/recommendations/${id}`, { headers: ALICE })).body).toEqual(
      recos[0],
    );
    expect((await orc.request('GET', `/recommendations/${id}`, { headers: BOB })).status).toBe(404);
  });

  it.each([
    ['/reports?limit=0', 'limit'],
    ['/reports?limit=101', 'limit'],
    ['/reports?symbol=BTC.USDT', 'symbol'],
    ['/reports?timeframe=2d', 'timeframe'],
    ['/reports?asOf=yesterday', 'asOf'],
    ['/reports?cursor=nope', 'cursor'],
    ['/reports?limit=1&limit=2', 'limit'],
    ['/recommendations?minStrength=2', 'minStrength'],
    ['/recommendations?minStrength=abc', 'minStrength'],
    ['/reports/not-an-id', 'reportId'],
    ['/recommendations/rpt_000000000000000000000000', 'recoId'],
  ])('GET %s is a 400 {code, message, details} naming %s', async (path, parameter) => {
    const res = await orc.request('GET', path, { headers: ALICE });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'INVALID_REQUEST', message: expect.any(String) });
    expect(JSON.stringify(res.body)).toContain(parameter);
  });

  it('refuses unknown query parameters', async () => {
    const res = await orc.request('GET', '/reports?stymbol=BTC', { headers: ALICE });
    expect(res).toMatchObject({
      status: 400,
      body: { details: { unknownParameters: ['stymbol'] } },
    });
  });
});

describe('POST /admin/index/backfill', () => {
  let orc: TestOrchestrator;
  let indexed: FlowRun;
  let missing: FlowRun;

  beforeAll(async () => {
    orc = await startTestOrchestrator();
    indexed = runWithLlmSteps({ suffix: 'aaa' });
    missing = runWithLlmSteps({ suffix: 'bbb', createdAt: '2026-09-20T01:00:00.000Z' });
    for (const run of [indexed, missing]) await orc.store.create(run);
    const put = (uri: string, value: unknown) =>
      orc.artifacts.put(uri, Buffer.from(JSON.stringify(value)), {
        contentType: 'application/json',
      });
    await put(artifactUriOf(indexed.runId, REPORT_STEP), reportFileFor(indexed.runId, REPORT_STEP));
    await put(
      artifactUriOf(indexed.runId, RECO_STEP),
      recommendationFileFor(indexed.runId, RECO_STEP),
    );
    // `missing` has its report artifact but not the recommendation's.
    await put(artifactUriOf(missing.runId, REPORT_STEP), reportFileFor(missing.runId, REPORT_STEP));
  });
  afterAll(() => orc.close());

  it('dry run by default: lists what it would create and writes nothing', async () => {
    const res = await orc.request('POST', '/admin/index/backfill');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      dryRun: true,
      scannedRuns: 2,
      truncated: false,
      counts: { created: 0, wouldCreate: 3, alreadyIndexed: 0, unreadable: 1 },
    });
    expect((res.body as { items: unknown[] }).items).toContainEqual({
      runId: missing.runId,
      stepId: RECO_STEP,
      kind: 'recommendation',
      id: recommendationIdFor(missing.runId, RECO_STEP),
      outcome: 'unreadable',
      reason: 'missing',
    });
    expect(await orc.reportIndex.getReport(reportIdFor(indexed.runId, REPORT_STEP))).toBeNull();
  });

  it('apply creates the missing entries; a second pass finds them all', async () => {
    const applied = await orc.request('POST', '/admin/index/backfill', { body: { apply: true } });
    expect(applied.body).toMatchObject({
      dryRun: false,
      counts: { created: 3, wouldCreate: 0, alreadyIndexed: 0, unreadable: 1 },
    });
    expect(await orc.reportIndex.getReport(reportIdFor(indexed.runId, REPORT_STEP))).toMatchObject({
      ownerId: 'alice',
    });
    const again = await orc.request('POST', '/admin/index/backfill', { body: { apply: true } });
    expect(again.body).toMatchObject({
      counts: { created: 0, wouldCreate: 0, alreadyIndexed: 3, unreadable: 1 },
    });
    expect(orc.logs.withEvent('index_backfill_finished')).toHaveLength(3);
  });

  it('rejects an unknown body field or a non-boolean apply', async () => {
    for (const body of [{ apply: 'yes' }, { dryRun: false }, [1]]) {
      const res = await orc.request('POST', '/admin/index/backfill', { body });
      expect(res).toMatchObject({ status: 400, body: { code: 'INVALID_REQUEST' } });
    }
  });
});
