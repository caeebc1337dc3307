import type { Firestore } from '@google-cloud/firestore';
import { PubSub } from '@google-cloud/pubsub';
import { InMemoryArtifactStore } from '@tda/artifacts';
import { validate, type FlowRun, type FlowStep } from '@tda/contracts';
import { flowCatalogue } from '@tda/flow-engine';
import { createFirestore, FirestoreFlowRunStore, updateWithRetry } from '@tda/flow-store';
import { applyTopology, BrokerPublisher, buildTopology, GooglePubSubBroker } from '@tda/messaging';
import { createMemoryLogger, type MemoryLogger } from '@tda/observability';
import { emulatorEndpoints, expectEventually, uniqueName } from '@tda/test-support';
import { createStepWorker, type StepAbortReason, type WorkerMicroservice } from '@tda/worker-kit';
import { jsonResult, TestStepHandler } from '@tda/worker-kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ManualClock,
  startTestOrchestrator,
  type TestOrchestrator,
} from '../testing/orchestrator.harness';
import type { ReconcileReport } from './reconciler.service';

/** The orchestrator on the wall clock (the workers' timers are real). */
class WallClock extends ManualClock {
  override readonly now = (): Date => new Date();
}

const FLOW = 'market_charts_v1';
const OHLCV_1M = 'ohlcv_export:1M';
const OHLCV_1W = 'ohlcv_export:1w';
const CHARTS_1M = 'charts:1M:ctpl_default_v1';
const CHARTS_1W = 'charts:1w:ctpl_default_v1';
/** Worker policy: short so that the suite stays fast; heartbeats carry cancels within ~250 ms. */
const POLICY = { leaseMs: 3_000, heartbeatMs: 250, timeoutMs: 6_000, infraBaseDelayMs: 20 };

/**
 * How the test handlers behave for the OHLCV steps of a run, by the run's symbol (set before the
 * trigger, which dispatches at once); charts always succeed.
 */
type Behaviour = 'ok' | 'hang' | 'stuck';

interface Execution {
  runId: string;
  stepId: string;
  signal: AbortSignal;
}

/**
 * Reliability on the Firestore and Pub/Sub emulators, with the real orchestrator (HTTP API,
 * step-event consumer, reconciler) and real step harnesses (worker-kit) around test handlers:
 * reclaim of a dead worker's step, STEP_TIMEOUT (reconciler and harness), RUN_TIMEOUT with the
 * running handlers aborted, cancel mid-step, and GET (dry run) / POST /admin/reconcile.
 */
describe('reliability on the emulators: leases, timeouts, cancel, admin reconcile', () => {
  const collection = uniqueName('flow_runs');
  const prefix = uniqueName('rel');
  const behaviours = new Map<string, Behaviour>();
  const executions: Execution[] = [];
  let firestore: Firestore;
  let pubsub: PubSub;
  let broker: GooglePubSubBroker;
  let store: FirestoreFlowRunStore;
  let orc: TestOrchestrator;
  let workerLogs: MemoryLogger;
  const workers: WorkerMicroservice[] = [];

  const handlerFor = (stepType: 'OHLCV_EXPORT' | 'CHART_EXPORT'): TestStepHandler => {
    const handler = new TestStepHandler(stepType);
    handler.executeImpl = async (ctx) => {
      executions.push({ runId: ctx.run.runId, stepId: ctx.stepId, signal: ctx.signal });
      const behaviour = stepType === 'OHLCV_EXPORT' ? behaviours.get(ctx.run.scope.symbol) : 'ok';
      if (behaviour === 'stuck' && ctx.stepId === OHLCV_1M) {
        // ignores its signal and never returns: only the harness's step deadline ends it
        return new Promise(() => undefined);
      }
      if (behaviour === 'hang') {
        await new Promise<void>((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
        });
      }
      return jsonResult(ctx);
    };
    return handler;
  };

  beforeAll(async () => {
    const { firestoreHost, pubsubHost, projectId } = emulatorEndpoints();
    firestore = createFirestore({ projectId, emulatorHost: firestoreHost });
    pubsub = new PubSub({ projectId, apiEndpoint: pubsubHost, emulatorMode: true });
    await applyTopology(
      pubsub,
      buildTopology({
        prefix,
        stepTypes: ['OHLCV_EXPORT', 'CHART_EXPORT'],
        subscriptionDefaults: { minimumBackoffSeconds: 1, maximumBackoffSeconds: 2 },
      }),
    );
    broker = new GooglePubSubBroker({ pubsub, closeTimeoutMs: 2_000 });
    const clock = new WallClock();
    store = new FirestoreFlowRunStore(firestore, { collection, clock: clock.now });
    const artifacts = new InMemoryArtifactStore();
    orc = await startTestOrchestrator({
      store,
      broker,
      artifacts,
      clock,
      // the reconciler runs only when a test asks (GET / POST /admin/reconcile)
      env: { TDA_PUBSUB_PREFIX: prefix, TDA_STEP_TIMEOUT_GRACE_MS: '1000' },
    });
    workerLogs = createMemoryLogger({ service: 'reliability-workers', level: 'info' });
    for (const stepType of ['OHLCV_EXPORT', 'CHART_EXPORT'] as const) {
      const worker = await createStepWorker({
        handler: handlerFor(stepType),
        store,
        broker,
        artifacts,
        logger: workerLogs.logger,
        prefix,
        policy: POLICY,
        drainTimeoutMs: 500,
      });
      await worker.app.listen();
      workers.push(worker);
    }
  });

  afterAll(async () => {
    for (const worker of workers) await worker.app.close();
    await orc?.close();
    await broker?.close();
    await pubsub?.close();
    await firestore?.recursiveDelete(firestore.collection(collection));
    await firestore?.terminate();
  });

  const getRun = async (runId: string): Promise<FlowRun> => {
    const res = await orc.request('GET', `/runs/${runId}`);
    expect(res.status).toBe(200);
    return res.body as FlowRun;
  };
  const claimsOf = (runId: string, stepId: string): number =>
    workerLogs
      .withEvent('step_claimed')
      .filter((r) => r['runId'] === runId && r['stepId'] === stepId).length;
  const executionsOf = (runId: string): Execution[] => executions.filter((e) => e.runId === runId);
  const dispatchesOf = (runId: string): number =>
    orc.logs.withEvent('step_dispatched').filter((r) => r['runId'] === runId).length;

  /** A run document written straight to Firestore, as a crash or a lost message left it. */
  async function seedRun(
    symbol: string,
    steps: Partial<Record<string, Partial<FlowStep>>>,
  ): Promise<FlowRun> {
    const createdAt = new Date(Date.now() - 120_000);
    const run = flowCatalogue.createRun({
      flowKey: FLOW,
      scope: { symbol },
      ownerId: 'local-user',
      trigger: { type: 'USER', source: 'reliability-int-spec' },
      now: createdAt,
      random: Math.random,
    });
    run.status = 'RUNNING';
    run.startedAt = createdAt.toISOString();
    for (const [stepId, fields] of Object.entries(steps)) {
      const step = run.steps[stepId];
      if (step === undefined || fields === undefined) throw new Error(`no step ${stepId}`);
      run.steps[stepId] = { ...step, ...fields };
    }
    const checked = validate.flowRun(run);
    expect(checked.ok ? [] : checked.issues).toEqual([]);
    await store.create(run);
    return run;
  }

  it('GET /admin/reconcile shows the drift with zero writes and zero publishes; POST reclaims the dead worker step, which is re-executed, and fails a stuck step STEP_TIMEOUT', async () => {
    const ago = (ms: number): string => new Date(Date.now() - ms).toISOString();
    const ahead = (ms: number): string => new Date(Date.now() + ms).toISOString();
    // A worker claimed 1M and died (lease expired within its budget); 1w's message was lost.
    const dead = await seedRun('BTC-USDT', {
      [OHLCV_1M]: {
        status: 'RUNNING',
        attempt: 1,
        readyAt: ago(100_000),
        lease: { owner: 'worker/dead-host/1/x', expiresAt: ago(30_000) },
        deadlineAt: ahead(60_000),
        maxAttempts: 3,
        outputs: { execution: { timing: { startedAt: ago(90_000) } } },
      },
      [OHLCV_1W]: { status: 'READY', readyAt: ago(100_000) },
    });
    // A worker alive but stuck: its lease is current, its step deadline long gone.
    const stuck = await seedRun('ETH-USDT', {
      [OHLCV_1M]: {
        status: 'RUNNING',
        attempt: 1,
        readyAt: ago(100_000),
        lease: { owner: 'worker/stuck-host/1/y', expiresAt: ahead(600_000) },
        deadlineAt: ago(10_000),
        maxAttempts: 3,
        outputs: { execution: { timing: { startedAt: ago(90_000) } } },
      },
      [OHLCV_1W]: {
        status: 'SUCCEEDED',
        attempt: 1,
        finishedAt: ago(50_000),
        outputs: { gcs_uri: `gs://tda-artifacts/runs/x/1w/${OHLCV_1W}.json` },
      },
      [CHARTS_1W]: { status: 'READY', readyAt: ago(1_000) },
    });
    const versions = async (): Promise<(string | undefined)[]> => [
      (await store.get(dead.runId))?.version,
      (await store.get(stuck.runId))?.version,
    ];
    const before = await versions();

    const dry = await orc.request('GET', '/admin/reconcile');
    expect(dry.status).toBe(200);
    const report = dry.body as ReconcileReport;
    expect(report).toMatchObject({
      mode: 'dry_run',
      runsScanned: 2,
      runsWritten: 0,
      republished: 0,
    });
    const drift = new Map(report.drift.runs.map((r) => [r.runId, r.items]));
    expect(drift.get(dead.runId)).toEqual([
      expect.objectContaining({ kind: 'lease_expired', action: 'reclaim', stepId: OHLCV_1M }),
      expect.objectContaining({ kind: 'ready_unclaimed', action: 'republish', stepId: OHLCV_1W }),
    ]);
    expect(drift.get(stuck.runId)).toEqual([
      expect.objectContaining({ kind: 'step_timeout', action: 'fail_step', stepId: OHLCV_1M }),
      expect.objectContaining({
        kind: 'artifact_missing',
        action: 'report_only',
        stepId: OHLCV_1W,
      }),
    ]);
    // zero writes, zero publishes
    expect(await versions()).toEqual(before);
    expect(dispatchesOf(dead.runId) + dispatchesOf(stuck.runId)).toBe(0);

    const applied = await orc.request('POST', '/admin/reconcile?artifacts=false');
    expect(applied.status).toBe(200);
    expect(applied.body).toMatchObject({
      mode: 'apply',
      runsWritten: 2,
      reclaimedSteps: 1,
      timedOutSteps: 1,
      republished: 2,
    });
    // the reclaimed step is executed again by a live worker, and the run completes
    const done = await expectEventually(
      async () => {
        const run = await getRun(dead.runId);
        expect(run.status).toBe('SUCCEEDED');
        return run;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    expect(done.steps[OHLCV_1M]).toMatchObject({ status: 'SUCCEEDED', attempt: 2 });
    expect(claimsOf(dead.runId, OHLCV_1M)).toBe(1);
    expect(
      executionsOf(dead.runId)
        .map((e) => e.stepId)
        .sort(),
    ).toEqual([CHARTS_1M, CHARTS_1W, OHLCV_1M, OHLCV_1W].sort());
    const failed = await getRun(stuck.runId);
    expect(failed).toMatchObject({ status: 'FAILED', error: { code: 'STEP_TIMEOUT' } });
    expect(failed.steps[OHLCV_1M]).toMatchObject({
      status: 'FAILED',
      error: { code: 'STEP_TIMEOUT', details: { leaseOwner: 'worker/stuck-host/1/y' } },
    });
    expect(failed.steps[OHLCV_1M]?.lease).toBeUndefined();
  });

  it('run deadline → run FAILED RUN_TIMEOUT; the running handlers are aborted and their steps CANCELLED', async () => {
    const now = new Date();
    behaviours.set('SOL-USDT', 'hang');
    const run = flowCatalogue.createRun({
      flowKey: FLOW,
      scope: { symbol: 'SOL-USDT' },
      ownerId: 'local-user',
      trigger: { type: 'USER', source: 'reliability-int-spec' },
      // room for the claims to happen first even on a loaded machine; not later than the step
      // timeout, so the run deadline (not the step's) is what stops the handlers
      deadlineSeconds: POLICY.timeoutMs / 1_000,
      now,
      random: Math.random,
    });
    await store.create(run);
    // the queued run is started by the admission at the end of an apply pass
    expect((await orc.request('POST', '/admin/reconcile?artifacts=false')).status).toBe(200);
    await expectEventually(() => expect(executionsOf(run.runId)).toHaveLength(2), {
      timeoutMs: 20_000,
    });
    const final = await expectEventually(
      async () => {
        const current = await getRun(run.runId);
        expect(current.status).toBe('FAILED');
        expect(current.steps[OHLCV_1M]?.status).toBe('CANCELLED');
        expect(current.steps[OHLCV_1W]?.status).toBe('CANCELLED');
        return current;
      },
      { timeoutMs: 20_000, intervalMs: 200 },
    );
    expect(final.error).toMatchObject({ code: 'RUN_TIMEOUT' });
    for (const stepId of [OHLCV_1M, OHLCV_1W]) {
      expect(final.steps[stepId]?.error).toMatchObject({
        code: 'CANCELLED',
        details: { cause: 'deadline_passed' },
      });
    }
    for (const execution of executionsOf(run.runId)) {
      expect(execution.signal.aborted).toBe(true);
      expect(execution.signal.reason).toEqual({ kind: 'cancelled' } satisfies StepAbortReason);
    }
    expect(final.steps[CHARTS_1M]?.status).toBe('CANCELLED');
    expect(executionsOf(run.runId).map((e) => e.stepId)).not.toContain(CHARTS_1M);
  });

  it('cancel mid-step: the heartbeat aborts the handlers, steps and run CANCELLED, and nothing restarts', async () => {
    behaviours.set('ADA-USDT', 'hang');
    const res = await orc.request('POST', '/runs', {
      body: { flowKey: FLOW, scope: { symbol: 'ADA-USDT' } },
    });
    expect(res.status).toBe(201);
    const { runId } = res.body as FlowRun;
    await expectEventually(
      async () => {
        const current = await getRun(runId);
        expect(current.steps[OHLCV_1M]?.status).toBe('RUNNING');
        expect(current.steps[OHLCV_1W]?.status).toBe('RUNNING');
      },
      { timeoutMs: 20_000, intervalMs: 100 },
    );
    const cancelled = await orc.request('POST', `/runs/${runId}/cancel`);
    expect(cancelled).toMatchObject({ status: 200, body: { status: 'CANCELLED' } });
    expect((await orc.request('POST', `/runs/${runId}/cancel`)).status).toBe(200);
    const final = await expectEventually(
      async () => {
        const current = await getRun(runId);
        expect(current.steps[OHLCV_1M]?.status).toBe('CANCELLED');
        expect(current.steps[OHLCV_1W]?.status).toBe('CANCELLED');
        return current;
      },
      { timeoutMs: 20_000, intervalMs: 100 },
    );
    expect(final.status).toBe('CANCELLED');
    expect(final.steps[OHLCV_1M]?.error).toMatchObject({ details: { cause: 'cancel_requested' } });
    for (const execution of executionsOf(runId)) {
      expect(execution.signal.reason).toEqual({ kind: 'cancelled' } satisfies StepAbortReason);
    }
    // the orchestrator's advance on the two CANCELLED step events refreshes the counters last
    await expectEventually(
      async () =>
        expect((await getRun(runId)).progress).toMatchObject({ cancelled: 4, running: 0 }),
      { timeoutMs: 20_000, intervalMs: 100 },
    );
    const version = (await store.get(runId))?.version;

    // never restarts: a reconcile pass does not touch it, duplicate step-ready messages are no-ops
    const pass = (await orc.request('POST', '/admin/reconcile')).body as ReconcileReport;
    expect(pass.drift.runs.map((r) => r.runId)).not.toContain(runId);
    const publisher = new BrokerPublisher({ publisher: broker, prefix });
    for (const stepId of [OHLCV_1M, OHLCV_1W]) {
      await publisher.publishStepReady({
        runId,
        stepId,
        stepType: 'OHLCV_EXPORT',
        attempt: 1,
        dispatchedAt: new Date().toISOString(),
        reason: 'replay',
      });
    }
    await expectEventually(
      () => {
        const noops = workerLogs
          .withEvent('step_noop')
          .filter((r) => r['runId'] === runId && r['reason'] === 'run_not_running');
        expect(noops.length).toBeGreaterThanOrEqual(2);
      },
      { timeoutMs: 20_000 },
    );
    expect((await store.get(runId))?.version).toBe(version);
    expect(claimsOf(runId, OHLCV_1M)).toBe(1);
    expect(claimsOf(runId, OHLCV_1W)).toBe(1);
    expect((await getRun(runId)).status).toBe('CANCELLED');
  });

  it('a worker whose lease is taken over stops at once and writes nothing more (lease_lost)', async () => {
    behaviours.set('DOT-USDT', 'hang');
    const res = await orc.request('POST', '/runs', {
      body: { flowKey: FLOW, scope: { symbol: 'DOT-USDT' } },
    });
    expect(res.status).toBe(201);
    const { runId } = res.body as FlowRun;
    await expectEventually(
      async () => expect((await getRun(runId)).steps[OHLCV_1M]?.status).toBe('RUNNING'),
      { timeoutMs: 20_000, intervalMs: 100 },
    );
    // another owner holds the step now (as after a reclaim and a new claim elsewhere)
    const thief = {
      owner: 'worker/other-host/1/z',
      expiresAt: new Date(Date.now() + 600_000).toISOString(),
    };
    // conditional like every write; re-decided when a heartbeat lands in between
    const stolen = await updateWithRetry(store, runId, () => ({
      kind: 'write',
      patch: { [`steps.${OHLCV_1M}.lease`]: thief },
      result: null,
    }));
    expect(stolen.kind).toBe('written');
    await expectEventually(
      () =>
        expect(
          workerLogs
            .withEvent('lease_lost')
            .filter((r) => r['runId'] === runId && r['stepId'] === OHLCV_1M),
        ).toHaveLength(1),
      { timeoutMs: 20_000 },
    );
    const execution = executionsOf(runId).find((e) => e.stepId === OHLCV_1M);
    expect(execution?.signal.reason).toEqual({ kind: 'lease_lost' } satisfies StepAbortReason);
    // several heartbeat periods later: still the other owner's, never extended or finalized by us
    await new Promise((resolve) => setTimeout(resolve, 4 * POLICY.heartbeatMs));
    const step = (await getRun(runId)).steps[OHLCV_1M];
    expect(step).toMatchObject({ status: 'RUNNING', lease: thief, attempt: 1 });
    expect(step?.finishedAt).toBeUndefined();
    const finalized = workerLogs.records.filter(
      (r) =>
        r['runId'] === runId &&
        r['stepId'] === OHLCV_1M &&
        ['step_succeeded', 'step_failed', 'step_cancelled'].includes(String(r['event'])),
    );
    expect(finalized).toEqual([]);
    expect((await orc.request('POST', `/runs/${runId}/cancel`)).status).toBe(200);
  });

  it('a handler that ignores its signal past the step timeout → the harness finalizes FAILED STEP_TIMEOUT', async () => {
    behaviours.set('XRP-USDT', 'stuck');
    const res = await orc.request('POST', '/runs', {
      body: { flowKey: FLOW, scope: { symbol: 'XRP-USDT' } },
    });
    expect(res.status).toBe(201);
    const { runId } = res.body as FlowRun;
    const final = await expectEventually(
      async () => {
        const current = await getRun(runId);
        expect(current.status).toBe('FAILED');
        return current;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    expect(final.steps[OHLCV_1M]).toMatchObject({
      status: 'FAILED',
      error: { code: 'STEP_TIMEOUT', details: { timeoutMs: POLICY.timeoutMs } },
    });
    expect(final.error).toMatchObject({ code: 'STEP_TIMEOUT' });
    expect(claimsOf(runId, OHLCV_1M)).toBe(1);
  });
});
