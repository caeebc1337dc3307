import type { FlowRun } from '@tda/contracts';
import { decideClaim } from '@tda/flow-engine';
import { updateWithRetry } from '@tda/flow-store';
import { afterEach, describe, expect, it } from 'vitest';
import {
  collectStepReady,
  simulateWorker,
  startTestOrchestrator,
  type TestOrchestrator,
} from '../testing/orchestrator.harness';
import type { ReconcileReport } from './reconciler.service';

const TRIGGER = { flowKey: 'scheduled_month_week_report_v1', scope: { symbol: 'BTC-USDT' } };
const OHLCV_1M = 'ohlcv_export:1M';
const OHLCV_1W = 'ohlcv_export:1w';

function asReport(body: unknown): ReconcileReport {
  expect(body).toMatchObject({ mode: expect.any(String), drift: { runs: expect.any(Array) } });
  return body as ReconcileReport;
}

/**
 * Issue 5 "no lost steps": a run ended (cancel, fail-fast) while a worker held a step, and the
 * worker died before its heartbeat could finalize the step CANCELLED.
 */
describe('reconciler: steps left RUNNING in ended runs', () => {
  let orc: TestOrchestrator | undefined;

  afterEach(async () => {
    await orc?.close();
    orc = undefined;
  });

  async function trigger(o: TestOrchestrator, symbol = 'BTC-USDT'): Promise<FlowRun> {
    const res = await o.request('POST', '/runs', { body: { ...TRIGGER, scope: { symbol } } });
    expect(res.status).toBe(201);
    return res.body as FlowRun;
  }

  async function claim(o: TestOrchestrator, runId: string, stepId: string, leaseMs: number) {
    const outcome = await updateWithRetry(o.store, runId, (run) => {
      const decision = decideClaim(run, stepId, { now: o.clock.now(), owner: 'dead', leaseMs });
      return decision.kind === 'claim'
        ? { kind: 'write', patch: decision.patch, result: null }
        : { kind: 'noop', reason: decision.kind, result: null };
    });
    expect(outcome.kind).toBe('written');
  }

  async function stored(o: TestOrchestrator, runId: string) {
    const read = await o.store.get(runId);
    if (read === null) throw new Error(`run ${runId} is gone`);
    return read;
  }

  it('cancelled run: GET lists the expired step with zero writes and publishes; POST closes it CANCELLED; a live lease is left alone', async () => {
    const o = await startTestOrchestrator();
    orc = o;
    const consumer = await collectStepReady(o.broker, [
      'OHLCV_EXPORT',
      'CHART_EXPORT',
      'LLM_REPORT',
    ]);
    const run = await trigger(o);
    await expect.poll(() => consumer.received.length).toBe(2);
    await claim(o, run.runId, OHLCV_1M, 30_000);
    await claim(o, run.runId, OHLCV_1W, 120_000);
    expect((await o.request('POST', `/runs/${run.runId}/cancel`)).status).toBeLessThan(300);
    expect((await stored(o, run.runId)).run).toMatchObject({
      status: 'CANCELLED',
      steps: { [OHLCV_1M]: { status: 'RUNNING' }, [OHLCV_1W]: { status: 'RUNNING' } },
    });
    o.clock.advance(31_000);
    const before = await stored(o, run.runId);

    const dry = asReport((await o.request('GET', '/admin/reconcile?artifacts=false')).body);
    expect(dry).toMatchObject({
      mode: 'dry_run',
      runsScanned: 0,
      endedRunsScanned: 1,
      runsWritten: 0,
      republished: 0,
      drift: { total: 1, byKind: { lease_expired: 1 } },
    });
    expect(dry.drift.runs).toEqual([
      {
        runId: run.runId,
        flowKey: TRIGGER.flowKey,
        status: 'CANCELLED',
        items: [
          expect.objectContaining({
            kind: 'lease_expired',
            action: 'cancel_step',
            stepId: OHLCV_1M,
            detail: expect.objectContaining({ leaseOwner: 'dead', runStatus: 'CANCELLED' }),
          }),
        ],
      },
    ]);
    expect((await stored(o, run.runId)).version).toBe(before.version);

    const applied = asReport((await o.request('POST', '/admin/reconcile?artifacts=false')).body);
    expect(applied).toMatchObject({
      mode: 'apply',
      runsWritten: 1,
      cancelledSteps: 1,
      runsFinished: 0,
      republished: 0,
    });
    expect(applied.drift.runs[0]?.applied).toEqual({
      written: true,
      status: 'CANCELLED',
      republished: [],
    });
    const after = (await stored(o, run.runId)).run;
    expect(after.status).toBe('CANCELLED');
    expect(after.steps[OHLCV_1M]).toMatchObject({
      status: 'CANCELLED',
      error: { code: 'CANCELLED' },
    });
    expect(after.steps[OHLCV_1M]?.lease).toBeUndefined();
    expect(after.steps[OHLCV_1W]).toMatchObject({ status: 'RUNNING', lease: { owner: 'dead' } });
    expect(after.progress).toMatchObject({ running: 1 });
    // Only the orchestrator's dispatches of the trigger: the reconciler published nothing.
    expect(consumer.received).toHaveLength(2);
    expect(o.logs.withEvent('run_advanced').filter((l) => l['cause'] === 'reconcile')).toEqual([]);

    // nothing left to do until the second lease expires too
    const quiet = await o.reconciler.reconcileOnce();
    expect(quiet).toMatchObject({ runsWritten: 0, drift: { total: 0 } });
    o.clock.advance(90_000);
    expect(await o.reconciler.reconcileOnce()).toMatchObject({ runsWritten: 1, cancelledSteps: 1 });
    expect((await stored(o, run.runId)).run.steps[OHLCV_1W]?.status).toBe('CANCELLED');
    await consumer.close();
  });

  it('failed (fail-fast) run: the step its dead worker held is closed CANCELLED; the run stays FAILED', async () => {
    const o = await startTestOrchestrator();
    orc = o;
    const run = await trigger(o);
    await claim(o, run.runId, OHLCV_1M, 30_000);
    await simulateWorker(o.store, run.runId, OHLCV_1W, o.clock.now, { status: 'FAILED' });
    await o.reconciler.reconcileOnce();
    const failed = (await stored(o, run.runId)).run;
    expect(failed.status).toBe('FAILED');
    expect(failed.steps[OHLCV_1M]?.status).toBe('RUNNING');

    o.clock.advance(31_000);
    const report = await o.reconciler.reconcileOnce();
    expect(report).toMatchObject({ runsScanned: 0, endedRunsScanned: 1, cancelledSteps: 1 });
    const after = (await stored(o, run.runId)).run;
    expect(after).toMatchObject({ status: 'FAILED', error: failed.error });
    expect(after.finishedAt).toBe(failed.finishedAt);
    expect(after.steps[OHLCV_1M]).toMatchObject({ status: 'CANCELLED' });
  });

  it('leaves SUCCEEDED runs unscanned, and TDA_RECONCILE_ENDED_RUNS bounds the window (newest first)', async () => {
    const o = await startTestOrchestrator({ env: { TDA_RECONCILE_ENDED_RUNS: '1' } });
    orc = o;
    const older = await trigger(o, 'BTC-USDT');
    o.clock.advance(1_000);
    const newer = await trigger(o, 'ETH-USDT');
    o.clock.advance(1_000);
    const succeeded = await trigger(o, 'SOL-USDT');
    for (const r of [older, newer, succeeded]) await claim(o, r.runId, OHLCV_1M, 30_000);
    for (const r of [older, newer]) {
      expect((await o.request('POST', `/runs/${r.runId}/cancel`)).status).toBeLessThan(300);
    }
    // A SUCCEEDED run cannot hold a RUNNING step; forced here to prove it is not looked at.
    const forced = await stored(o, succeeded.runId);
    await o.store.update(succeeded.runId, { status: 'SUCCEEDED' }, forced.version);
    const versions = new Map<string, string>();
    for (const r of [older, succeeded]) versions.set(r.runId, (await stored(o, r.runId)).version);
    o.clock.advance(31_000);

    const report = await o.reconciler.reconcileOnce();
    expect(report).toMatchObject({ runsScanned: 0, endedRunsScanned: 1, runsWritten: 1 });
    expect(report.drift.runs.map((r) => r.runId)).toEqual([newer.runId]);
    expect((await stored(o, newer.runId)).run.steps[OHLCV_1M]?.status).toBe('CANCELLED');
    for (const r of [older, succeeded]) {
      expect((await stored(o, r.runId)).version).toBe(versions.get(r.runId));
    }
  });
});
