import type { FlowRun } from '@tda/contracts';
import { decideClaim, flowCatalogue, type RunPatch } from '@tda/flow-engine';
import { seededRandom } from '@tda/flow-engine/testing';
import {
  InMemoryFlowRunStore,
  updateWithRetry,
  type FlowRunStore,
  type RunListPage,
  type RunCountQuery,
  RunListQuery,
  type VersionedRun,
} from '@tda/flow-store';
import { afterEach, describe, expect, it } from 'vitest';
import {
  collectStepReady,
  ManualClock,
  simulateWorker,
  startTestOrchestrator,
  type TestOrchestrator,
} from '../testing/orchestrator.harness';

const TRIGGER = { flowKey: 'scheduled_month_week_report_v1', scope: { symbol: 'BTC-USDT' } };

/** Counts conditional writes per run; optionally fails the writes of one run. */
class CountingStore implements FlowRunStore {
  readonly updates = new Map<string, number>();
  failUpdatesOf: string | undefined;

  constructor(private readonly inner: FlowRunStore) {}

  create(run: FlowRun): Promise<VersionedRun> {
    return this.inner.create(run);
  }

  get(runId: string): Promise<VersionedRun | null> {
    return this.inner.get(runId);
  }

  update(runId: string, patch: RunPatch, expectedVersion: string): Promise<VersionedRun> {
    if (runId === this.failUpdatesOf) return Promise.reject(new Error('firestore unavailable'));
    this.updates.set(runId, (this.updates.get(runId) ?? 0) + 1);
    return this.inner.update(runId, patch, expectedVersion);
  }

  list(query: RunListQuery): Promise<RunListPage> {
    return this.inner.list(query);
  }

  count(query: RunCountQuery): Promise<number> {
    return this.inner.count(query);
  }
}

async function trigger(orc: TestOrchestrator, body: object = TRIGGER): Promise<FlowRun> {
  const res = await orc.request('POST', '/runs', { body });
  expect(res.status).toBe(201);
  return res.body as FlowRun;
}

describe('reconciler', () => {
  let orc: TestOrchestrator | undefined;

  afterEach(async () => {
    await orc?.close();
    orc = undefined;
  });

  it('republishes READY steps unclaimed for longer than TDA_READY_REPUBLISH_AFTER_MS, without writing', async () => {
    orc = await startTestOrchestrator();
    const consumer = await collectStepReady(orc.broker, ['OHLCV_EXPORT']);
    const run = await trigger(orc);
    await expect.poll(() => consumer.received.length).toBe(2);
    const version = (await orc.store.get(run.runId))?.version;

    orc.clock.advance(59_000);
    const early = await orc.reconciler.reconcileOnce();
    expect(early).toMatchObject({ runsScanned: 1, runsWritten: 0, republished: 0 });

    orc.clock.advance(1_000);
    const due = await orc.reconciler.reconcileOnce();
    expect(due).toMatchObject({ runsScanned: 1, runsWritten: 0, republished: 2, errors: 0 });
    await expect.poll(() => consumer.received.length).toBe(4);
    expect(consumer.received.slice(2).map((m) => [m.body.stepId, m.body.reason])).toEqual(
      expect.arrayContaining([
        ['ohlcv_export:1M', 'reconcile'],
        ['ohlcv_export:1w', 'reconcile'],
      ]),
    );
    expect((await orc.store.get(run.runId))?.version).toBe(version);
    expect(orc.logs.withEvent('reconcile_finished').at(-1)).toMatchObject({ republished: 2 });
    await consumer.close();
  });

  it('advances a PENDING run whose first advance never happened and dispatches its steps', async () => {
    orc = await startTestOrchestrator();
    const consumer = await collectStepReady(orc.broker, ['OHLCV_EXPORT']);
    const pending = flowCatalogue.createRun({
      ...TRIGGER,
      ownerId: 'local-user',
      trigger: { type: 'USER', source: 'test' },
      now: orc.clock.now(),
      random: seededRandom(99),
    });
    await orc.store.create(pending);
    const report = await orc.reconciler.reconcileOnce();
    expect(report).toMatchObject({ runsScanned: 1, runsWritten: 1, republished: 2 });
    await expect.poll(() => consumer.received.length).toBe(2);
    expect(consumer.received.every((m) => m.body.reason === 'advance')).toBe(true);
    expect((await orc.store.get(pending.runId))?.run.status).toBe('RUNNING');
    expect(orc.logs.withEvent('run_advanced')).toEqual([
      expect.objectContaining({ runId: pending.runId, cause: 'reconcile', status: 'RUNNING' }),
    ]);
    await consumer.close();
  });

  it('fails a run past its deadline with RUN_TIMEOUT and dispatches nothing', async () => {
    orc = await startTestOrchestrator();
    const consumer = await collectStepReady(orc.broker, ['OHLCV_EXPORT']);
    const run = await trigger(orc, { ...TRIGGER, deadlineSeconds: 60 });
    await expect.poll(() => consumer.received.length).toBe(2);
    orc.clock.advance(61_000);
    const report = await orc.reconciler.reconcileOnce();
    expect(report).toMatchObject({ runsWritten: 1, runsFinished: 1, republished: 0 });
    const failed = (await orc.store.get(run.runId))?.run;
    expect(failed?.status).toBe('FAILED');
    expect(failed?.error?.code).toBe('RUN_TIMEOUT');
    expect(Object.values(failed?.steps ?? {}).every((s) => s.status === 'CANCELLED')).toBe(true);
    expect(await orc.reconciler.reconcileOnce()).toMatchObject({ runsScanned: 0 });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(consumer.received).toHaveLength(2);
    await consumer.close();
  });

  it('reclaims a step whose lease expired and republishes it; fails it with LEASE_EXPIRED at max attempts', async () => {
    const o = await startTestOrchestrator({ env: { TDA_MAX_STEP_ATTEMPTS: '2' } });
    orc = o;
    const consumer = await collectStepReady(o.broker, ['OHLCV_EXPORT']);
    const run = await trigger(o, { ...TRIGGER, deadlineSeconds: 3_600 });
    const claim = async (owner: string): Promise<void> => {
      const outcome = await updateWithRetry(o.store, run.runId, (r) => {
        const decision = decideClaim(r, 'ohlcv_export:1M', {
          now: o.clock.now(),
          owner,
          leaseMs: 30_000,
        });
        return decision.kind === 'claim'
          ? { kind: 'write', patch: decision.patch, result: decision.attempt }
          : { kind: 'noop', reason: decision.kind, result: 0 };
      });
      expect(outcome.kind).toBe('written');
    };
    await claim('worker-a');
    orc.clock.advance(31_000);
    const first = await orc.reconciler.reconcileOnce();
    expect(first).toMatchObject({ reclaimedSteps: 1, runsWritten: 1 });
    const reclaimed = (await orc.store.get(run.runId))?.run.steps['ohlcv_export:1M'];
    expect(reclaimed).toMatchObject({ status: 'READY', attempt: 1 });
    await expect
      .poll(() => consumer.received.filter((m) => m.body.stepId === 'ohlcv_export:1M').length)
      .toBe(2);
    expect(consumer.received.at(-1)?.body).toMatchObject({ stepId: 'ohlcv_export:1M', attempt: 1 });

    await claim('worker-b');
    orc.clock.advance(31_000);
    const second = await orc.reconciler.reconcileOnce();
    expect(second).toMatchObject({ failedSteps: 1, runsFinished: 1 });
    const failed = (await orc.store.get(run.runId))?.run;
    expect(failed?.steps['ohlcv_export:1M']).toMatchObject({
      status: 'FAILED',
      error: { code: 'LEASE_EXPIRED' },
    });
    expect(failed?.status).toBe('FAILED');
    await consumer.close();
  });

  it('without TDA_MAX_STEP_ATTEMPTS it honours the maxAttempts the claim recorded (the worker policy)', async () => {
    const o = await startTestOrchestrator();
    orc = o;
    const run = await trigger(o);
    const claim = async (maxAttempts: number): Promise<void> => {
      const outcome = await updateWithRetry(o.store, run.runId, (r) => {
        const decision = decideClaim(r, 'ohlcv_export:1M', {
          now: o.clock.now(),
          owner: 'worker-a',
          leaseMs: 30_000,
          maxAttempts,
        });
        return decision.kind === 'claim'
          ? { kind: 'write', patch: decision.patch, result: null }
          : { kind: 'noop', reason: decision.kind, result: null };
      });
      expect(outcome.kind).toBe('written');
    };
    await claim(1);
    o.clock.advance(31_000);
    expect(await o.reconciler.reconcileOnce()).toMatchObject({ failedSteps: 1, reclaimedSteps: 0 });
    expect((await o.store.get(run.runId))?.run.steps['ohlcv_export:1M']).toMatchObject({
      status: 'FAILED',
      error: { code: 'LEASE_EXPIRED', details: { attempt: 1, maxAttempts: 1 } },
    });
  });

  it('the timer pass does not check artifacts; an admin pass does', async () => {
    orc = await startTestOrchestrator();
    const run = await trigger(orc);
    await simulateWorker(orc.store, run.runId, 'ohlcv_export:1M', orc.clock.now);
    expect(await orc.reconciler.reconcileOnce()).toMatchObject({ artifactsChecked: 0 });
    expect(await orc.reconciler.run({ mode: 'dry_run', checkArtifacts: true })).toMatchObject({
      artifactsChecked: 1,
      artifactsMissing: 1,
      runsWritten: 0,
    });
  });

  it('writes each run at most once per pass and keeps going when one run fails', async () => {
    const clock = new ManualClock();
    const store = new CountingStore(new InMemoryFlowRunStore({ clock: clock.now }));
    orc = await startTestOrchestrator({ store, clock });
    const a = await trigger(orc, { ...TRIGGER, deadlineSeconds: 60 });
    const b = await trigger(orc, {
      ...TRIGGER,
      scope: { symbol: 'ETH-USDT' },
      deadlineSeconds: 60,
    });
    store.updates.clear();
    store.failUpdatesOf = a.runId;
    clock.advance(61_000);
    const report = await orc.reconciler.reconcileOnce();
    expect(report).toMatchObject({ runsScanned: 2, runsWritten: 1, errors: 1 });
    expect(store.updates.get(b.runId)).toBe(1);
    expect(store.updates.get(a.runId)).toBeUndefined();
    expect((await store.get(b.runId))?.run.status).toBe('FAILED');

    store.failUpdatesOf = undefined;
    const retry = await orc.reconciler.reconcileOnce();
    expect(retry).toMatchObject({ runsScanned: 1, runsWritten: 1, errors: 0 });
    expect((await store.get(a.runId))?.run.status).toBe('FAILED');
  });

  it('runs on its timer when TDA_RECONCILE_INTERVAL_MS > 0 and stops with the app', async () => {
    orc = await startTestOrchestrator({ env: { TDA_RECONCILE_INTERVAL_MS: '20' } });
    await expect
      .poll(() => orc?.logs.withEvent('reconcile_finished').length)
      .toBeGreaterThanOrEqual(2);
    await orc.close();
    const passes = orc.logs.withEvent('reconcile_finished').length;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(orc.logs.withEvent('reconcile_finished').length).toBe(passes);
    orc = undefined;
  });
});
