import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  validate,
  type BacktestJob,
  type BacktestJobPage,
  type BacktestSnapshot,
  type BacktestTop,
} from '@tda/contracts';
import type { InMemoryFlowRunStore } from '@tda/flow-store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestOrchestrator, type TestOrchestrator } from '../testing/orchestrator.harness';

/**
 * The backtest jobs API (seed 003) on in-memory adapters: a façade over runs of backtest_v1. No
 * worker runs here: the tests play the worker's part on the store (checkpoint, succeeded step).
 */
const STEP = 'backtest:1h';
const REQUEST = {
  symbol: 'BTC-USDT',
  asOf: '2026-09-20T00:00:00Z',
  strategy: { kind: 'ma_cross', ma: 'ema', params: { fast: [5, 10], slow: [50] } },
  top_k: 3,
  top_trades_n: 1,
};
const EXAMPLE = join(__dirname, '../../../../contracts/examples/backtest_result.example.json');

function checkedJob(body: unknown): BacktestJob {
  const checked = validate.backtestJob(body);
  if (!checked.ok) throw new Error(`not a BacktestJob: ${JSON.stringify(checked.issues)}`);
  return checked.value;
}

describe('backtest jobs API (seed 003)', () => {
  let orc: TestOrchestrator;
  beforeEach(async () => {
    orc = await startTestOrchestrator({ env: { TDA_BACKTEST_MAX_ACTIVE_JOBS_PER_OWNER: '2' } });
  });
  afterEach(async () => {
    await orc.close();
  });

  const create = async (body: Record<string, unknown> = {}): Promise<BacktestJob> => {
    orc.clock.advance(1_000);
    const res = await orc.request('POST', '/backtests/jobs', { body: { ...REQUEST, ...body } });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toMatch(/^\/backtests\/jobs\//);
    return checkedJob(res.body);
  };
  const store = () => orc.store as InMemoryFlowRunStore;

  it('creates a job: state, the effective request with defaults, the three hashes', async () => {
    const job = await create();
    expect(job).toMatchObject({
      state: 'running',
      symbol: 'BTC-USDT',
      timeframe: '1h',
      as_of: '2026-09-20T00:00:00Z',
      request: { bars: 5_000, preselect: 200, top_k: 3, top_trades_n: 1 },
    });
    expect(Object.values(job.hashes).every((h) => /^[a-f0-9]{64}$/.test(h))).toBe(true);
    const again = await orc.request('GET', `/backtests/jobs/${job.job_id}`);
    expect(checkedJob(again.body)).toMatchObject({ job_id: job.job_id, hashes: job.hashes });
  });

  it('refuses a broken grid with one deterministic 422 payload and creates nothing', async () => {
    const bad = { ...REQUEST, top_k: 500, top_trades_n: 600, execution: { feeBps: [-1] } };
    const first = await orc.request('POST', '/backtests/jobs', { body: bad });
    const second = await orc.request('POST', '/backtests/jobs', { body: bad });
    expect(first.status).toBe(422);
    expect(first.body).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: {
        violations: [
          { path: 'execution.feeBps', problem: 'invalid_values', values: [-1] },
          { path: 'top_k', problem: 'above_limit', limit: 100, actual: 500 },
          { path: 'top_trades_n', problem: 'above_top_k', limit: 500, actual: 600 },
        ],
      },
    });
    expect((second.body as { details: unknown }).details).toEqual(
      (first.body as { details: unknown }).details,
    );
    const page = (await orc.request('GET', '/backtests/jobs')).body as BacktestJobPage;
    expect(page.items).toEqual([]);
  });

  it('max_active_jobs_per_user: the third active job is a 429; a repeated key still answers', async () => {
    const first = await create({ idempotencyKey: 'bt-1' });
    await create();
    const third = await orc.request('POST', '/backtests/jobs', { body: REQUEST });
    expect(third.status).toBe(429);
    expect(third.body).toMatchObject({ code: 'QUOTA_EXCEEDED', details: { active: 2, limit: 2 } });
    const repeat = await orc.request('POST', '/backtests/jobs', {
      body: { ...REQUEST, idempotencyKey: 'bt-1' },
    });
    expect(repeat.status).toBe(200);
    expect(checkedJob(repeat.body).job_id).toBe(first.job_id);
    // A cancelled job is no longer active.
    await orc.request('POST', `/backtests/jobs/${first.job_id}/cancel`, { body: {} });
    await create();
  });

  it('cancel is idempotent: cancelled at once without a worker, the same answer again', async () => {
    const job = await create();
    const first = await orc.request('POST', `/backtests/jobs/${job.job_id}/cancel`, { body: {} });
    expect(first.status).toBe(200);
    expect(checkedJob(first.body)).toMatchObject({ state: 'cancelled' });
    const again = await orc.request('POST', `/backtests/jobs/${job.job_id}/cancel`, { body: {} });
    expect(again.status).toBe(200);
    expect(checkedJob(again.body).state).toBe('cancelled');
  });

  it('lists by state, newest first, in keyset pages', async () => {
    const a = await create();
    const b = await create();
    await orc.request('POST', `/backtests/jobs/${a.job_id}/cancel`, { body: {} });
    const all = (await orc.request('GET', '/backtests/jobs?limit=1')).body as BacktestJobPage;
    expect(all.items.map((j) => j.job_id)).toEqual([b.job_id]);
    const next = await orc.request(
      'GET',
      `/backtests/jobs?limit=1&cursor=${all.next_cursor ?? ''}`,
    );
    expect((next.body as BacktestJobPage).items.map((j) => j.job_id)).toEqual([a.job_id]);
    const cancelled = await orc.request('GET', '/backtests/jobs?state=cancelled');
    expect((cancelled.body as BacktestJobPage).items.map((j) => j.job_id)).toEqual([a.job_id]);
    const bad = await orc.request('GET', '/backtests/jobs?state=done');
    expect(bad.status).toBe(400);
  });

  it('top: none before any snapshot, best-so-far while running, the result once succeeded', async () => {
    const job = await create();
    const top = async (q = '') =>
      (await orc.request('GET', `/backtests/jobs/${job.job_id}/top${q}`)).body as BacktestTop;
    expect(await top()).toMatchObject({ source: 'none', items: [] });

    const result = JSON.parse(readFileSync(EXAMPLE, 'utf8')) as { top: BacktestSnapshot['top'] };
    const snapshot: BacktestSnapshot = {
      schemaVersion: 1,
      runId: job.job_id,
      stepId: STEP,
      ownerId: job.owner_id,
      attempt: 1,
      stage: 'stage_b',
      processedUnits: 10,
      totalUnits: 32,
      top: result.top.map(({ variant_key, base_variant_key, strategy, execution, metrics }) => ({
        variant_key,
        base_variant_key,
        strategy,
        execution,
        metrics,
      })),
      updatedAt: '2026-09-21T00:00:00.000Z',
    };
    await store().writeCheckpoint(job.job_id, STEP, { ...snapshot }, () => true);
    const running = await top('?limit=2');
    expect(running).toMatchObject({ source: 'best_so_far', stage: 'stage_b', processed_units: 10 });
    expect(running.items.map((i) => i.rank)).toEqual([1, 2]);
    expect(
      running.items.every((i) => i.report_table_md === undefined && i.trades === undefined),
    ).toBe(true);

    const uri = `gs://tda-artifacts/runs/${job.job_id}/1h/${STEP}.json`;
    const artifact = { ...JSON.parse(readFileSync(EXAMPLE, 'utf8')), runId: job.job_id };
    await orc.artifacts.put(uri, Buffer.from(JSON.stringify(artifact)), {
      contentType: 'application/json',
    });
    const current = await orc.store.get(job.job_id);
    await orc.store.update(
      job.job_id,
      {
        status: 'SUCCEEDED',
        [`steps.${STEP}.status`]: 'SUCCEEDED',
        [`steps.${STEP}.outputs`]: { gcs_uri: uri },
      },
      current?.version ?? '',
    );
    const done = await top();
    expect(done).toMatchObject({ source: 'result', state: 'succeeded' });
    expect(done.items.every((i) => i.report_table_md?.startsWith('| field | value |'))).toBe(true);
    expect(done.items.map((i) => i.trades !== undefined)).toEqual([true, false, false]);
  });

  it("another owner's job, a run of another flow and an unknown id are 404", async () => {
    const job = await create();
    const bob = await orc.tokenFor('bob');
    const foreign = await orc.request('GET', `/backtests/jobs/${job.job_id}`, { token: bob });
    expect(foreign.status).toBe(404);
    const run = await orc.request('POST', '/runs', {
      body: { flowKey: 'market_charts_v1', scope: { symbol: 'BTC-USDT' } },
    });
    const runId = (run.body as { runId: string }).runId;
    expect((await orc.request('GET', `/backtests/jobs/${runId}`)).status).toBe(404);
    const unknown = '/backtests/jobs/20260101-000000_BTC-USDT_nope1';
    expect((await orc.request('GET', unknown)).status).toBe(404);
    // A malformed id is a 400, as for runs.
    expect((await orc.request('GET', '/backtests/jobs/nope')).status).toBe(400);
  });
});

describe('backtest jobs API disabled (TDA_BACKTEST_JOBS_ENABLED=false)', () => {
  it('does not mount the routes', async () => {
    const orc = await startTestOrchestrator({ env: { TDA_BACKTEST_JOBS_ENABLED: 'false' } });
    try {
      const res = await orc.request('POST', '/backtests/jobs', { body: REQUEST });
      expect(res.status).toBe(404);
      expect((await orc.request('GET', '/backtests/jobs')).status).toBe(404);
    } finally {
      await orc.close();
    }
  });
});
