import { validate, type FlowRun } from '@tda/contracts';
import { decideClaim } from '@tda/flow-engine';
import { updateWithRetry } from '@tda/flow-store';
import { afterEach, describe, expect, it } from 'vitest';
import type { ReconcileReport } from '../reconcile/reconciler.service';
import {
  collectStepReady,
  simulateWorker,
  startTestOrchestrator,
  type TestOrchestrator,
} from '../testing/orchestrator.harness';

const TRIGGER = { flowKey: 'scheduled_month_week_report_v1', scope: { symbol: 'BTC-USDT' } };
const OHLCV_1M = 'ohlcv_export:1M';
const OHLCV_1W = 'ohlcv_export:1w';
const CHARTS_1M = 'charts:1M:ctpl_default_v1';

function asReport(body: unknown): ReconcileReport {
  expect(body).toMatchObject({ mode: expect.any(String), drift: { runs: expect.any(Array) } });
  return body as ReconcileReport;
}

function asApiError(body: unknown): { code: string; details?: Record<string, unknown> } {
  const checked = validate.apiError(body);
  if (!checked.ok) throw new Error(`not an ApiError: ${JSON.stringify(checked.issues)}`);
  return checked.value;
}

describe('GET / POST /admin/reconcile', () => {
  let orc: TestOrchestrator | undefined;

  afterEach(async () => {
    await orc?.close();
    orc = undefined;
  });

  async function trigger(o: TestOrchestrator, body: object = TRIGGER): Promise<FlowRun> {
    const res = await o.request('POST', '/runs', { body });
    expect(res.status).toBe(201);
    return res.body as FlowRun;
  }

  /** A worker that claims a step and then dies (its lease is never extended). */
  async function claimAndDie(
    o: TestOrchestrator,
    runId: string,
    stepId: string,
    policy: { leaseMs: number; timeoutMs?: number },
  ): Promise<void> {
    const outcome = await updateWithRetry(o.store, runId, (run) => {
      const decision = decideClaim(run, stepId, { now: o.clock.now(), owner: 'dead', ...policy });
      return decision.kind === 'claim'
        ? { kind: 'write', patch: decision.patch, result: null }
        : { kind: 'noop', reason: decision.kind, result: null };
    });
    expect(outcome.kind).toBe('written');
  }

  it('needs the bearer token', async () => {
    orc = await startTestOrchestrator();
    for (const method of ['GET', 'POST']) {
      const res = await orc.request(method, '/admin/reconcile', { token: null });
      expect(res.status).toBe(401);
      expect(asApiError(res.body).code).toBe('UNAUTHENTICATED');
    }
  });

  it('GET reports the drift with zero writes and zero publishes; POST fixes it and says what it did', async () => {
    const o = await startTestOrchestrator();
    orc = o;
    const consumer = await collectStepReady(o.broker, ['OHLCV_EXPORT', 'CHART_EXPORT']);
    const run = await trigger(o);
    await expect.poll(() => consumer.received.length).toBe(2);
    // 1M succeeded but its step event was lost (the advance never happened) and its artifact is
    // not in storage; 1w was claimed by a worker that died.
    await simulateWorker(o.store, run.runId, OHLCV_1M, o.clock.now);
    await claimAndDie(o, run.runId, OHLCV_1W, { leaseMs: 30_000 });
    o.clock.advance(31_000);
    const before = await o.store.get(run.runId);

    const dry = await o.request('GET', '/admin/reconcile');
    expect(dry.status).toBe(200);
    const report = asReport(dry.body);
    expect(report).toMatchObject({
      mode: 'dry_run',
      runsScanned: 1,
      truncated: false,
      runsWritten: 0,
      republished: 0,
      artifactsChecked: 1,
      artifactsMissing: 1,
      drift: {
        total: 3,
        byKind: { lease_expired: 1, advance_pending: 1, artifact_missing: 1 },
      },
    });
    expect(report.drift.runs).toEqual([
      {
        runId: run.runId,
        flowKey: TRIGGER.flowKey,
        status: 'RUNNING',
        items: [
          expect.objectContaining({ kind: 'lease_expired', action: 'reclaim', stepId: OHLCV_1W }),
          expect.objectContaining({
            kind: 'advance_pending',
            action: 'advance',
            detail: expect.objectContaining({ newlyReady: [CHARTS_1M] }),
          }),
          expect.objectContaining({
            kind: 'artifact_missing',
            action: 'report_only',
            stepId: OHLCV_1M,
            detail: expect.objectContaining({ reason: 'not_found' }),
          }),
        ],
      },
    ]);
    // a dry run: nothing written, nothing published
    expect((await o.store.get(run.runId))?.version).toBe(before?.version);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(consumer.received).toHaveLength(2);

    const applied = await o.request('POST', '/admin/reconcile');
    expect(applied.status).toBe(200);
    const done = asReport(applied.body);
    expect(done).toMatchObject({
      mode: 'apply',
      runsWritten: 1,
      reclaimedSteps: 1,
      republished: 2,
      artifactsMissing: 1,
    });
    expect(done.drift.runs[0]?.applied).toEqual({
      written: true,
      status: 'RUNNING',
      republished: [CHARTS_1M, OHLCV_1W],
    });
    const after = (await o.store.get(run.runId))?.run;
    expect(after?.steps[OHLCV_1W]).toMatchObject({ status: 'READY', attempt: 1 });
    expect(after?.steps[CHARTS_1M]?.status).toBe('READY');
    // the missing artifact is reported, never "fixed"
    expect(after?.steps[OHLCV_1M]?.status).toBe('SUCCEEDED');
    await expect.poll(() => consumer.received.length).toBe(4);
    expect(
      consumer.received
        .slice(2)
        .map((m) => [m.body.stepId, m.body.reason])
        .sort(),
    ).toEqual([
      [CHARTS_1M, 'advance'],
      [OHLCV_1W, 'reconcile'],
    ]);

    // fixed: only the (report-only) missing artifact is left
    const again = asReport((await o.request('GET', '/admin/reconcile')).body);
    expect(again.drift.byKind).toEqual({ artifact_missing: 1 });
    const quick = asReport((await o.request('GET', '/admin/reconcile?artifacts=false')).body);
    expect(quick).toMatchObject({ artifactsChecked: 0, drift: { total: 0, runs: [] } });
    await consumer.close();
  });

  it('a step past its deadlineAt (worker alive but stuck) → STEP_TIMEOUT; a run past its deadline → RUN_TIMEOUT', async () => {
    const o = await startTestOrchestrator({
      // only the timeouts are under test here, not stale READY steps
      env: { TDA_STEP_TIMEOUT_GRACE_MS: '5000', TDA_READY_REPUBLISH_AFTER_MS: '600000' },
    });
    orc = o;
    const stuck = await trigger(o);
    const late = await trigger(o, {
      ...TRIGGER,
      scope: { symbol: 'ETH-USDT' },
      deadlineSeconds: 60,
    });
    // a lease that keeps being extended (here: long) but a 10 s step timeout
    await claimAndDie(o, stuck.runId, OHLCV_1M, { leaseMs: 600_000, timeoutMs: 10_000 });
    o.clock.advance(14_000);
    expect(asReport((await o.request('GET', '/admin/reconcile')).body).drift.total).toBe(0);

    o.clock.advance(47_000);
    const dry = asReport((await o.request('GET', '/admin/reconcile?artifacts=false')).body);
    const byRun = new Map(dry.drift.runs.map((r) => [r.runId, r.items]));
    expect(byRun.get(stuck.runId)).toEqual([
      expect.objectContaining({
        kind: 'step_timeout',
        action: 'fail_step',
        stepId: OHLCV_1M,
        detail: expect.objectContaining({ errorCode: 'STEP_TIMEOUT', leaseOwner: 'dead' }),
      }),
    ]);
    expect(byRun.get(late.runId)).toEqual([
      expect.objectContaining({ kind: 'run_deadline', action: 'fail_run' }),
    ]);

    const done = asReport((await o.request('POST', '/admin/reconcile?artifacts=false')).body);
    expect(done).toMatchObject({
      runsWritten: 2,
      failedSteps: 1,
      timedOutSteps: 1,
      runsFinished: 2,
    });
    const stuckRun = (await o.store.get(stuck.runId))?.run;
    expect(stuckRun?.steps[OHLCV_1M]).toMatchObject({
      status: 'FAILED',
      error: { code: 'STEP_TIMEOUT', retryable: false },
    });
    expect(stuckRun?.steps[OHLCV_1M]?.lease).toBeUndefined();
    expect(stuckRun).toMatchObject({ status: 'FAILED', error: { code: 'STEP_TIMEOUT' } });
    expect((await o.store.get(late.runId))?.run).toMatchObject({
      status: 'FAILED',
      error: { code: 'RUN_TIMEOUT' },
    });
  });

  it('bounds the scan: ?limit=N looks at N runs and says truncated when more remain', async () => {
    const o = await startTestOrchestrator({ env: { TDA_RECONCILE_MAX_RUNS: '3' } });
    orc = o;
    for (const symbol of ['BTC-USDT', 'ETH-USDT', 'SOL-USDT']) {
      await trigger(o, { ...TRIGGER, scope: { symbol } });
    }
    expect(asReport((await o.request('GET', '/admin/reconcile?limit=2')).body)).toMatchObject({
      runsScanned: 2,
      maxRuns: 2,
      truncated: true,
    });
    expect(asReport((await o.request('GET', '/admin/reconcile')).body)).toMatchObject({
      runsScanned: 3,
      maxRuns: 3,
      truncated: false,
    });
    const tooMany = await o.request('GET', '/admin/reconcile?limit=4');
    expect(tooMany.status).toBe(400);
    expect(asApiError(tooMany.body)).toMatchObject({
      code: 'INVALID_REQUEST',
      details: { parameter: 'limit', max: 3 },
    });
  });

  it.each([
    ['GET', '/admin/reconcile?limit=0', { parameter: 'limit' }],
    ['GET', '/admin/reconcile?limit=abc', { parameter: 'limit' }],
    ['GET', '/admin/reconcile?artifacts=maybe', { parameter: 'artifacts' }],
    ['GET', '/admin/reconcile?dryRun=true', { unknownParameters: ['dryRun'] }],
    ['POST', '/admin/reconcile?limit=1&limit=2', { parameter: 'limit' }],
  ])('%s %s → 400 INVALID_REQUEST naming the problem', async (method, path, details) => {
    orc = await startTestOrchestrator();
    const res = await orc.request(method, path);
    expect(res.status).toBe(400);
    expect(asApiError(res.body)).toMatchObject({ code: 'INVALID_REQUEST', details });
  });

  it('POST with a body → 400 (options are query parameters) and nothing is applied', async () => {
    const o = await startTestOrchestrator();
    orc = o;
    const run = await trigger(o, { ...TRIGGER, deadlineSeconds: 60 });
    o.clock.advance(61_000);
    const res = await o.request('POST', '/admin/reconcile', { body: { dryRun: false } });
    expect(res.status).toBe(400);
    expect(asApiError(res.body).code).toBe('INVALID_REQUEST');
    expect((await o.store.get(run.runId))?.run.status).toBe('RUNNING');
    const ok = await o.request('POST', '/admin/reconcile', { body: {} });
    expect(ok.status).toBe(200);
    expect((await o.store.get(run.runId))?.run.status).toBe('FAILED');
  });

  it('a run whose write fails is reported with a sanitized error; the others are still applied', async () => {
    const o = await startTestOrchestrator();
    orc = o;
    const run = await trigger(o, { ...TRIGGER, deadlineSeconds: 60 });
    // the store refuses this run's writes with an error whose message must not leak
    const broken = o.store.update.bind(o.store);
    o.store.update = (runId, patch, version) =>
      runId === run.runId
        ? Promise.reject(new Error('secret connection string in here'))
        : broken(runId, patch, version);
    o.clock.advance(61_000);
    const report = asReport((await o.request('POST', '/admin/reconcile')).body);
    expect(report.errors).toBe(1);
    expect(report.drift.runs).toEqual([
      expect.objectContaining({
        runId: run.runId,
        error: { code: 'INTERNAL_ERROR', message: expect.not.stringContaining('secret') },
      }),
    ]);
  });
});
