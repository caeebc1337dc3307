import { validate, type FlowRun } from '@tda/contracts';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunPatch } from '@tda/flow-engine';
import {
  InMemoryFlowRunStore,
  type FlowRunStore,
  type RunCountQuery,
  type RunListQuery,
} from '@tda/flow-store';
import {
  ManualClock,
  collectStepReady,
  publishStepEvent,
  simulateWorker,
  startTestOrchestrator,
  type HttpResult,
  type TestOrchestrator,
} from '../testing/orchestrator.harness';

/** Two steps (OHLCV export, then charts): quick to drive to the end by hand. */
const CHARTS = { flowKey: 'market_charts_v1', scope: { symbol: 'BTC-USDT', timeframes: ['1h'] } };
const OHLCV = 'ohlcv_export:1h';
const CHART = 'charts:1h:ctpl_default_v1';

function asRun(body: unknown): FlowRun {
  const checked = validate.flowRun(body);
  if (!checked.ok) throw new Error(`not a FlowRun: ${JSON.stringify(checked.issues)}`);
  return checked.value;
}

function asApiError(body: unknown) {
  const checked = validate.apiError(body);
  if (!checked.ok) throw new Error(`not an ApiError: ${JSON.stringify(checked.issues)}`);
  return checked.value;
}

interface BlockedOnBody {
  runStatus: string;
  status: string;
  reasons: { kind: string; [key: string]: unknown }[];
  summary: string;
}

describe('queued runs and the active-runs quota', () => {
  let orc: TestOrchestrator | undefined;

  afterEach(async () => {
    await orc?.close();
    orc = undefined;
  });

  const start = async (env: Record<string, string>): Promise<TestOrchestrator> => {
    orc = await startTestOrchestrator({ env });
    return orc;
  };

  /** The runs below are alice's unless named otherwise; the operator (an admin) acts for her. */
  const ALICE = { headers: { 'X-TDA-Owner': 'alice' } };

  /** POST /runs one second after the previous trigger (creation order = trigger order). */
  const trigger = async (
    o: TestOrchestrator,
    owner = 'alice',
    body: object = CHARTS,
  ): Promise<HttpResult> => {
    o.clock.advance(1_000);
    return o.request('POST', '/runs', { body, headers: { 'X-TDA-Owner': owner } });
  };

  const created = async (o: TestOrchestrator, owner = 'alice'): Promise<FlowRun> => {
    const res = await trigger(o, owner);
    expect(res.status).toBe(201);
    return asRun(res.body);
  };

  const status = async (o: TestOrchestrator, runId: string) =>
    (await o.store.get(runId))?.run.status;

  const blockedOn = async (o: TestOrchestrator, runId: string, stepId = OHLCV, owner = 'alice') => {
    const res = await o.request('GET', `/runs/${runId}/steps/${stepId}/blocked-on`, {
      headers: { 'X-TDA-Owner': owner },
    });
    expect(res.status).toBe(200);
    return res.body as BlockedOnBody;
  };

  /** Worker side of both steps of a CHARTS run: the last step event ends the run. */
  const finish = async (
    o: TestOrchestrator,
    runId: string,
    outcome: 'SUCCEEDED' | 'FAILED' = 'SUCCEEDED',
  ): Promise<void> => {
    for (const [stepId, stepType] of [
      [OHLCV, 'OHLCV_EXPORT'],
      [CHART, 'CHART_EXPORT'],
    ] as const) {
      await expect
        .poll(async () => (await o.store.get(runId))?.run.steps[stepId]?.status)
        .toBe('READY');
      const attempt = await simulateWorker(o.store, runId, stepId, o.clock.now, {
        status: outcome,
      });
      await publishStepEvent(o.broker, {
        runId,
        stepId,
        stepType,
        status: outcome,
        attempt,
        at: o.clock.now().toISOString(),
      });
      if (outcome === 'FAILED') break;
    }
    await expect.poll(() => status(o, runId)).toBe(outcome);
  };

  it('keeps runs beyond TDA_MAX_RUNNING_RUNS PENDING with their queue position, dispatching nothing for them', async () => {
    const o = await start({ TDA_MAX_RUNNING_RUNS: '1' });
    const consumer = await collectStepReady(o.broker, ['OHLCV_EXPORT']);
    const a = await created(o);
    const b = await created(o, 'bob');
    const c = await created(o);
    expect([a.status, b.status, c.status]).toEqual(['RUNNING', 'PENDING', 'PENDING']);
    expect(Object.values(b.steps).every((s) => s.status === 'PENDING')).toBe(true);

    const second = await blockedOn(o, b.runId, OHLCV, 'bob');
    expect(second).toMatchObject({ runStatus: 'PENDING', status: 'PENDING' });
    expect(second.reasons).toEqual([
      {
        kind: 'queued',
        position: 1,
        queueLength: 2,
        ownerPosition: 1,
        ownerQueueLength: 1,
        admissible: false,
        waitingFor: [{ kind: 'running_limit', running: 1, limit: 1 }],
      },
    ]);
    expect(second.summary).toBe(
      `${OHLCV} is PENDING: queued (position 1 of 2): all 1 run slots are taken (1 running)`,
    );
    const third = await blockedOn(o, c.runId, CHART);
    expect(third.reasons.map((r) => r.kind)).toEqual(['queued', 'waiting_for_dependencies']);
    expect(third.reasons[0]).toMatchObject({ position: 2, queueLength: 2 });
    expect(third.summary).toContain('queued (position 2 of 2)');

    expect(o.logs.withEvent('run_queued')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ runId: c.runId, position: 2, waitingFor: ['running_limit'] }),
      ]),
    );
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(new Set(consumer.received.map((m) => m.body.runId))).toEqual(new Set([a.runId]));
    await consumer.close();
  });

  it('starts queued runs in creation order when a slot frees, until all SUCCEEDED', async () => {
    const o = await start({ TDA_MAX_RUNNING_RUNS: '1' });
    const runs = [await created(o), await created(o, 'bob'), await created(o)];
    const order: string[] = [];
    for (const run of runs) {
      // exactly one RUNNING at any time, and it is the oldest unfinished run
      await expect.poll(() => status(o, run.runId)).toBe('RUNNING');
      order.push(run.runId);
      for (const later of runs.slice(runs.indexOf(run) + 1)) {
        expect(await status(o, later.runId)).toBe('PENDING');
      }
      await finish(o, run.runId);
    }
    expect(order).toEqual(runs.map((r) => r.runId));
    for (const run of runs) expect(await status(o, run.runId)).toBe('SUCCEEDED');
    expect(
      o.logs
        .withEvent('run_advanced')
        .filter((r) => r['status'] === 'RUNNING' && r['previousStatus'] === 'PENDING')
        .map((r) => [r['runId'], r['cause']]),
    ).toEqual([
      [runs[0]?.runId, 'trigger'],
      [runs[1]?.runId, 'step_event'],
      [runs[2]?.runId, 'step_event'],
    ]);
  });

  it('a run held back by its owner limit does not block other owners behind it', async () => {
    const o = await start({ TDA_MAX_RUNNING_RUNS: '3', TDA_MAX_RUNNING_RUNS_PER_OWNER: '1' });
    const a1 = await created(o, 'alice');
    const a2 = await created(o, 'alice');
    const b1 = await created(o, 'bob');
    expect([a1.status, a2.status, b1.status]).toEqual(['RUNNING', 'PENDING', 'RUNNING']);
    const waiting = await blockedOn(o, a2.runId);
    expect(waiting.reasons[0]).toEqual({
      kind: 'queued',
      position: 1,
      queueLength: 1,
      ownerPosition: 1,
      ownerQueueLength: 1,
      admissible: false,
      waitingFor: [{ kind: 'owner_running_limit', ownerId: 'alice', running: 1, limit: 1 }],
    });
    expect(waiting.summary).toContain('owner alice has 1 of 1 allowed runs running');

    // bob finishing frees an overall slot, not alice's
    await finish(o, b1.runId);
    expect(await status(o, a2.runId)).toBe('PENDING');
    await finish(o, a1.runId, 'FAILED');
    await expect.poll(() => status(o, a2.runId)).toBe('RUNNING');
  });

  it('cancels a queued run at once; it never starts and the runs behind it move up', async () => {
    const o = await start({ TDA_MAX_RUNNING_RUNS: '1' });
    const consumer = await collectStepReady(o.broker, ['OHLCV_EXPORT']);
    const a = await created(o);
    const b = await created(o);
    const c = await created(o);
    const cancel = await o.request('POST', `/runs/${b.runId}/cancel`, ALICE);
    expect(cancel.status).toBe(200);
    const cancelled = asRun(cancel.body);
    expect(cancelled.status).toBe('CANCELLED');
    expect(cancelled.startedAt).toBeUndefined();
    expect(Object.values(cancelled.steps).every((s) => s.status === 'CANCELLED')).toBe(true);
    expect((await blockedOn(o, c.runId)).reasons[0]).toMatchObject({
      kind: 'queued',
      position: 1,
      queueLength: 1,
    });

    await finish(o, a.runId);
    await expect.poll(() => status(o, c.runId)).toBe('RUNNING');
    expect(await status(o, b.runId)).toBe('CANCELLED');
    // cancelling again is idempotent
    expect((await o.request('POST', `/runs/${b.runId}/cancel`, ALICE)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(consumer.received.some((m) => m.body.runId === b.runId)).toBe(false);
    await consumer.close();
  });

  it('cancelling a RUNNING run gives its slot to the oldest queued run', async () => {
    const o = await start({ TDA_MAX_RUNNING_RUNS: '1' });
    const a = await created(o);
    const b = await created(o);
    expect((await o.request('POST', `/runs/${a.runId}/cancel`, ALICE)).status).toBe(200);
    expect(await status(o, b.runId)).toBe('RUNNING');
    expect(o.logs.withEvent('run_advanced').at(-1)).toMatchObject({
      runId: b.runId,
      cause: 'cancel',
      status: 'RUNNING',
    });
  });

  it('answers 429 QUOTA_EXCEEDED beyond TDA_MAX_ACTIVE_RUNS_PER_OWNER and creates nothing', async () => {
    const o = await start({ TDA_MAX_RUNNING_RUNS: '1', TDA_MAX_ACTIVE_RUNS_PER_OWNER: '2' });
    const a = await created(o); // RUNNING
    const b = await created(o); // PENDING: queued runs count as active
    const refused = await trigger(o);
    expect(refused.status).toBe(429);
    expect(asApiError(refused.body)).toMatchObject({
      code: 'QUOTA_EXCEEDED',
      retryable: true,
      details: { ownerId: 'alice', active: 2, limit: 2 },
    });
    expect(asApiError(refused.body).message).toContain('TDA_MAX_ACTIVE_RUNS_PER_OWNER allows 2');
    expect((await o.store.list({ limit: 100, ownerId: 'alice' })).runs).toHaveLength(2);
    expect(o.logs.withEvent('run_quota_exceeded')).toEqual([
      expect.objectContaining({ ownerId: 'alice', active: 2, limit: 2 }),
    ]);

    // another owner is not affected; alice may trigger again once a run ended
    expect((await trigger(o, 'bob')).status).toBe(201);
    expect((await o.request('POST', `/runs/${b.runId}/cancel`, ALICE)).status).toBe(200);
    expect((await trigger(o)).status).toBe(201);
    expect(await status(o, a.runId)).toBe('RUNNING');
  });

  it('an idempotency key returns the existing run, even queued or at the quota', async () => {
    const o = await start({ TDA_MAX_RUNNING_RUNS: '1', TDA_MAX_ACTIVE_RUNS_PER_OWNER: '2' });
    await created(o);
    const keyed = { ...CHARTS, idempotencyKey: 'nightly' };
    const first = await trigger(o, 'alice', keyed);
    expect(first.status).toBe(201);
    expect(asRun(first.body).status).toBe('PENDING');
    const again = await trigger(o, 'alice', keyed);
    expect(again.status).toBe(200);
    expect(asRun(again.body)).toMatchObject({
      runId: asRun(first.body).runId,
      status: 'PENDING',
    });
    expect((await o.store.list({ limit: 100 })).runs).toHaveLength(2);
  });

  it('concurrent triggers never both take the last slot', async () => {
    const o = await start({ TDA_MAX_RUNNING_RUNS: '2', TDA_MAX_RUNNING_RUNS_PER_OWNER: '2' });
    const consumer = await collectStepReady(o.broker, ['OHLCV_EXPORT']);
    const responses = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        o.request('POST', '/runs', {
          body: { ...CHARTS, scope: { ...CHARTS.scope, symbol: `C${i}-USDT` } },
        }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual([201, 201, 201, 201, 201, 201]);
    const stored = (await o.store.list({ limit: 100 })).runs;
    expect(stored.filter((r) => r.status === 'RUNNING')).toHaveLength(2);
    expect(stored.filter((r) => r.status === 'PENDING')).toHaveLength(4);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(new Set(consumer.received.map((m) => m.body.runId)).size).toBe(2);
    await consumer.close();
  });

  it('the reconciler pass admits after a RUN_TIMEOUT and ends a queued run past its deadline', async () => {
    const o = await start({ TDA_MAX_RUNNING_RUNS: '1' });
    const a = await trigger(o, 'alice', { ...CHARTS, deadlineSeconds: 60 });
    const b = asRun((await trigger(o, 'alice', { ...CHARTS, deadlineSeconds: 600 })).body);
    const c = asRun((await trigger(o, 'alice', { ...CHARTS, deadlineSeconds: 30 })).body);
    expect([asRun(a.body).status, b.status, c.status]).toEqual(['RUNNING', 'PENDING', 'PENDING']);

    o.clock.advance(60_000);
    const report = await o.reconciler.reconcileOnce();
    // a: RUN_TIMEOUT by the reconciler; c: waited past its deadline (queue time counts); b: started
    expect(await status(o, asRun(a.body).runId)).toBe('FAILED');
    const expired = (await o.store.get(c.runId))?.run;
    expect(expired).toMatchObject({ status: 'FAILED', error: { code: 'RUN_TIMEOUT' } });
    expect(expired?.startedAt).toBeUndefined();
    expect(await status(o, b.runId)).toBe('RUNNING');
    expect(report).toMatchObject({ runsFinished: 2, errors: 0 });
  });

  it('admission counts running runs instead of reading them, and only when a run waits', async () => {
    const clock = new ManualClock();
    const store = new ListRecordingStore(new InMemoryFlowRunStore({ clock: clock.now }));
    orc = await startTestOrchestrator({ clock, store, env: { TDA_MAX_RUNNING_RUNS: '2' } });
    const o = orc;
    const first = await created(o);
    const second = await created(o, 'bob');
    // Nothing waited: each trigger listed the PENDING runs (its own) and counted, never listed RUNNING.
    expect(store.listed.filter((s) => s === 'RUNNING')).toEqual([]);
    expect(await status(o, second.runId)).toBe('RUNNING');

    const third = await created(o, 'carol');
    expect(await status(o, third.runId)).toBe('PENDING');
    await finish(o, first.runId);
    await expect.poll(() => status(o, third.runId)).toBe('RUNNING');
    expect(store.listed.filter((s) => s === 'RUNNING')).toEqual([]);
    expect(store.counted).toContainEqual({ status: 'RUNNING' });
    expect(store.counted).toContainEqual({ status: 'RUNNING', ownerId: 'carol' });
  });
});

/** Remembers the status of every list() and every count() query. */
class ListRecordingStore implements FlowRunStore {
  readonly listed: (string | undefined)[] = [];
  readonly counted: RunCountQuery[] = [];

  constructor(private readonly inner: FlowRunStore) {}

  create(run: FlowRun) {
    return this.inner.create(run);
  }

  get(runId: string) {
    return this.inner.get(runId);
  }

  update(runId: string, patch: RunPatch, expectedVersion: string) {
    return this.inner.update(runId, patch, expectedVersion);
  }

  list(query: RunListQuery) {
    this.listed.push(query.status);
    return this.inner.list(query);
  }

  count(query: RunCountQuery) {
    this.counted.push(query);
    return this.inner.count(query);
  }
}
