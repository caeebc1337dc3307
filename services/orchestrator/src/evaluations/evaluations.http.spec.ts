import 'reflect-metadata';
import type { EvaluationPage, EvaluationView, FlowRun } from '@tda/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  publishStepEvent,
  startTestOrchestrator,
  type TestOrchestrator,
} from '../testing/orchestrator.harness';

/**
 * Walk-forward evaluations on in-memory adapters: the window of runs, top-ups after a run ends
 * (step event, or a GET that finds one missed), idempotency, cancel and the refusals. No worker
 * runs here; the scores are exercised end to end (evaluate.e2e) and in libs/backtest.
 */
const REQUEST = {
  symbol: 'BTC-USDT',
  from: '2026-09-01T00:00:00Z',
  to: '2026-09-05T00:00:00Z',
  every: '1d',
  accountId: 'demo',
  window: 2,
};

describe('walk-forward evaluations API', () => {
  let orc: TestOrchestrator;
  beforeEach(async () => {
    orc = await startTestOrchestrator({ env: { TDA_EVALUATION_MAX_POINTS: '10' } });
    const account = { accountId: 'demo', quoteCurrency: 'USDT', cash: 10_000 };
    expect((await orc.request('POST', '/accounts', { body: account })).status).toBe(201);
  });
  afterEach(async () => {
    await orc.close();
  });

  const create = async (body: Record<string, unknown> = {}) =>
    orc.request('POST', '/evaluations/recommendations', { body: { ...REQUEST, ...body } });
  const view = async (id: string): Promise<EvaluationView> => {
    const res = await orc.request('GET', `/evaluations/${id}`);
    expect(res.status).toBe(200);
    return res.body as EvaluationView;
  };
  const runsOf = async (id: string): Promise<FlowRun[]> => {
    const { runs } = await orc.store.list({ limit: 100 });
    return runs.filter((r) => r.trigger.source === `evaluation:${id}`);
  };

  it('creates the points and starts `window` runs of flow 4 at the first asOfs', async () => {
    const res = await create();
    expect(res.status).toBe(201);
    const created = res.body as EvaluationView;
    expect(res.headers.get('location')).toBe(`/evaluations/${created.evaluationId}`);
    expect(created).toMatchObject({
      state: 'running',
      every: '1d',
      costs: { feeBps: 10, slippageBps: 0 },
      counts: { points: 5, triggered: 2, active: 2 },
      table: [],
    });
    expect(created.items.map((i) => i.asOf)).toEqual(
      [1, 2, 3, 4, 5].map((d) => `2026-09-0${d}T00:00:00Z`),
    );
    const runs = await runsOf(created.evaluationId);
    expect(
      runs.map((r) => [r.flowKey, r.scope['asOf'], r.scope['accountId'], r.trigger.type]).sort(),
    ).toEqual([
      ['recommendation_with_account_v1', '2026-09-01T00:00:00Z', 'demo', 'SYSTEM'],
      ['recommendation_with_account_v1', '2026-09-02T00:00:00Z', 'demo', 'SYSTEM'],
    ]);
    expect(runs.every((r) => r.idempotencyKey?.startsWith(`${created.evaluationId}:`))).toBe(true);
  });

  it('a repeated idempotencyKey answers 200 with the same evaluation and starts nothing new', async () => {
    const first = (await create({ idempotencyKey: 'wf-1' })).body as EvaluationView;
    const again = await create({ idempotencyKey: 'wf-1' });
    expect(again.status).toBe(200);
    expect((again.body as EvaluationView).evaluationId).toBe(first.evaluationId);
    expect(await runsOf(first.evaluationId)).toHaveLength(2);
  });

  it('a run that ends lets the next point start: on its step event, or on the next GET', async () => {
    const { evaluationId } = (await create()).body as EvaluationView;
    const at = async (day: number) =>
      (await runsOf(evaluationId)).find((r) => r.scope['asOf'] === `2026-09-0${day}T00:00:00Z`);
    const run = await at(1);
    const cancelled = await orc.request('POST', `/runs/${run?.runId ?? ''}/cancel`, { body: {} });
    expect(cancelled.body).toMatchObject({ status: 'CANCELLED' });
    // The step event of the ended run (as a worker's would be): the orchestrator tops up.
    const stepId = Object.keys(run?.steps ?? {})[0] ?? '';
    await publishStepEvent(orc.broker, {
      runId: run?.runId ?? '',
      stepId,
      stepType: run?.steps[stepId]?.stepType ?? 'OHLCV_EXPORT',
      status: 'CANCELLED',
      attempt: 1,
      at: orc.clock.now().toISOString(),
    });
    await expect.poll(async () => (await runsOf(evaluationId)).length).toBe(3);
    // A run that ends without an event (cancelled straight away): the next GET tops up.
    const second = await at(2);
    await orc.request('POST', `/runs/${second?.runId ?? ''}/cancel`, { body: {} });
    expect((await view(evaluationId)).counts).toMatchObject({
      triggered: 4,
      active: 2,
      cancelled: 2,
    });
  });

  it('cancel: the active runs are cancelled, nothing more starts; it is idempotent', async () => {
    const { evaluationId } = (await create()).body as EvaluationView;
    const res = await orc.request('POST', `/evaluations/${evaluationId}/cancel`, { body: {} });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      state: 'cancelled',
      counts: { triggered: 2, active: 0, cancelled: 2 },
    });
    expect((await runsOf(evaluationId)).map((r) => r.status)).toEqual(['CANCELLED', 'CANCELLED']);
    const again = await orc.request('POST', `/evaluations/${evaluationId}/cancel`, { body: {} });
    expect(again.body).toMatchObject({ state: 'cancelled', counts: { triggered: 2 } });
  });

  it.each([
    ['no accountId', { accountId: undefined }, 'invalid evaluation request'],
    ['a period that is not one', { every: 'daily' }, 'invalid evaluation request'],
    ['to before from', { to: '2026-08-01T00:00:00Z' }, 'to'],
    ['more points than TDA_EVALUATION_MAX_POINTS', { every: '1h' }, 'points'],
    ['a scope field the evaluation sets', { scope: { asOf: '2026-09-01T00:00:00Z' } }, 'asOf'],
    ['a scope field flow 4 does not know', { scope: { colour: 'red' } }, 'colour'],
    ['points past the market data', { to: '2026-12-01T00:00:00Z', every: '4w' }, 'asOf'],
  ])('refuses %s with 400 and creates nothing', async (_name, change, mention) => {
    const res = await create(change);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'INVALID_REQUEST' });
    expect(JSON.stringify(res.body)).toContain(mention);
    expect(((await orc.request('GET', '/evaluations')).body as EvaluationPage).items).toEqual([]);
  });

  it('refuses an account the owner does not have (404, as POST /runs) and creates nothing', async () => {
    const res = await create({ accountId: 'nobody' });
    expect(res.status).toBe(404);
    expect(JSON.stringify(res.body)).toContain('nobody');
    expect(((await orc.request('GET', '/evaluations')).body as EvaluationPage).items).toEqual([]);
  });

  it('lists the evaluations newest first and 404s an unknown id', async () => {
    const a = (await create()).body as EvaluationView;
    orc.clock.advance(1_000);
    const b = (await create({ symbol: 'ETH-USDT' })).body as EvaluationView;
    const page = (await orc.request('GET', '/evaluations?limit=1')).body as EvaluationPage;
    expect(page.items.map((e) => e.evaluationId)).toEqual([b.evaluationId]);
    const next = await orc.request('GET', `/evaluations?limit=1&cursor=${page.nextCursor ?? ''}`);
    expect((next.body as EvaluationPage).items.map((e) => e.evaluationId)).toEqual([
      a.evaluationId,
    ]);
    expect((await orc.request('GET', '/evaluations/evl_00000000000000000000')).status).toBe(404);
    expect((await orc.request('GET', '/evaluations?limit=0')).status).toBe(400);
  });
});
