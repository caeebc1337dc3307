import { validate, type ApiError, type FlowRun } from '@tda/contracts';
import { flowCatalogue, type RunPatch } from '@tda/flow-engine';
import { seededRandom } from '@tda/flow-engine/testing';
import {
  InMemoryFlowRunStore,
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
  startTestOrchestrator,
  type TestOrchestrator,
} from '../testing/orchestrator.harness';

const KEY = 'nightly-btc';
const TRIGGER = {
  flowKey: 'scheduled_month_week_report_v1',
  scope: { symbol: 'BTC-USDT' },
  idempotencyKey: KEY,
};

/**
 * Simulates another orchestrator instance: when this instance creates its run for KEY, the other
 * instance's run for the same key lands in the store first (after this instance's lookup), with
 * a createdAt `offsetMs` from ours.
 */
class RacingStore implements FlowRunStore {
  rival: FlowRun | undefined;

  constructor(
    private readonly inner: FlowRunStore,
    private readonly offsetMs: number,
  ) {}

  async create(run: FlowRun): Promise<VersionedRun> {
    if (this.rival === undefined && run.idempotencyKey === KEY) {
      this.rival = flowCatalogue.createRun({
        flowKey: run.flowKey,
        scope: run.scope,
        ownerId: run.ownerId,
        trigger: { type: 'USER', source: 'other-instance' },
        idempotencyKey: KEY,
        // the same request on an instance with the same configuration: the same deadline
        ...(run.deadlineAt === undefined
          ? {}
          : { deadlineSeconds: (Date.parse(run.deadlineAt) - Date.parse(run.createdAt)) / 1000 }),
        now: new Date(Date.parse(run.createdAt) + this.offsetMs),
        random: seededRandom(1234),
      });
      await this.inner.create(this.rival);
    }
    return this.inner.create(run);
  }

  get(runId: string): Promise<VersionedRun | null> {
    return this.inner.get(runId);
  }

  update(runId: string, patch: RunPatch, expectedVersion: string): Promise<VersionedRun> {
    return this.inner.update(runId, patch, expectedVersion);
  }

  list(query: RunListQuery): Promise<RunListPage> {
    return this.inner.list(query);
  }

  count(query: RunCountQuery): Promise<number> {
    return this.inner.count(query);
  }
}

describe('idempotency across instances (post-create re-check)', () => {
  let orc: TestOrchestrator | undefined;

  afterEach(async () => {
    await orc?.close();
    orc = undefined;
  });

  it('an older run of another instance wins: ours is cancelled as a duplicate before any dispatch', async () => {
    const clock = new ManualClock();
    const store = new RacingStore(new InMemoryFlowRunStore({ clock: clock.now }), -1);
    orc = await startTestOrchestrator({ store, clock });
    const consumer = await collectStepReady(orc.broker, ['OHLCV_EXPORT']);
    const res = await orc.request('POST', '/runs', { body: TRIGGER });
    const rival = store.rival;
    if (rival === undefined) throw new Error('the rival was not created');
    expect(res.status).toBe(200);
    expect((res.body as FlowRun).runId).toBe(rival.runId);
    // the winner gets advanced by the trigger that found it (it was never advanced by its own)
    expect((res.body as FlowRun).status).toBe('RUNNING');

    const runs = (await store.list({ limit: 10, idempotencyKey: KEY })).runs;
    expect(runs).toHaveLength(2);
    const ours = runs.find((r) => r.runId !== rival.runId);
    expect(ours).toMatchObject({
      status: 'CANCELLED',
      error: { code: 'CANCELLED', details: { duplicateOf: rival.runId } },
    });
    expect(Object.values(ours?.steps ?? {}).every((s) => s.status === 'CANCELLED')).toBe(true);
    await expect.poll(() => consumer.received.length).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(consumer.received.every((m) => m.body.runId === rival.runId)).toBe(true);
    await consumer.close();
  });

  it('a newer rival loses: this trigger creates, admits and answers 201; the rival never starts', async () => {
    const clock = new ManualClock();
    const store = new RacingStore(new InMemoryFlowRunStore({ clock: clock.now }), +1);
    orc = await startTestOrchestrator({ store, clock });
    const res = await orc.request('POST', '/runs', { body: TRIGGER });
    expect(res.status).toBe(201);
    expect((res.body as FlowRun).runId).not.toBe(store.rival?.runId);
    expect((res.body as FlowRun).status).toBe('RUNNING');
    // The rival's own trigger would cancel it on its re-check; our admission pass must not
    // start it either: it finds the older run with the key and discards the rival as a
    // duplicate, so none of its steps is ever dispatched.
    const rival = (await store.get(store.rival?.runId ?? ''))?.run;
    expect(rival).toMatchObject({
      status: 'CANCELLED',
      error: { code: 'CANCELLED', details: { duplicateOf: (res.body as FlowRun).runId } },
    });
    expect(Object.values(rival?.steps ?? {}).every((s) => s.status === 'CANCELLED')).toBe(true);
  });

  it('a retried trigger finishes the first advance of a run that was created but never advanced', async () => {
    const clock = new ManualClock();
    const store = new InMemoryFlowRunStore({ clock: clock.now });
    orc = await startTestOrchestrator({ store, clock });
    const crashed = flowCatalogue.createRun({
      ...TRIGGER,
      ownerId: 'local-user',
      trigger: { type: 'USER', source: 'crashed' },
      deadlineSeconds: 3600, // the default deadline the crashed trigger gave it
      now: clock.now(),
      random: seededRandom(5),
    });
    await store.create(crashed);
    const res = await orc.request('POST', '/runs', { body: TRIGGER });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ runId: crashed.runId, status: 'RUNNING' });
  });
});

describe('a repeated idempotency key with another deadline', () => {
  let orc: TestOrchestrator | undefined;

  afterEach(async () => {
    await orc?.close();
    orc = undefined;
  });

  async function post(body: object): Promise<{ status: number; body: unknown }> {
    if (orc === undefined) throw new Error('no orchestrator');
    return orc.request('POST', '/runs', { body });
  }

  /** A 409 CONFLICT in the standard error body that names the deadline as the difference. */
  function expectDeadlineConflict(
    res: { status: number; body: unknown },
    run: FlowRun,
    requested: number | null,
    existing: number | null,
  ): void {
    expect(res.status).toBe(409);
    const checked = validate.apiError(res.body);
    expect(checked.ok ? [] : checked.issues).toEqual([]);
    expect(res.body as ApiError).toMatchObject({
      code: 'CONFLICT',
      retryable: false,
      requestId: expect.any(String),
      details: {
        runId: run.runId,
        idempotencyKey: KEY,
        field: 'deadlineSeconds',
        requested,
        existing,
      },
    });
    expect((res.body as ApiError).message).toContain('deadlineSeconds');
  }

  it('is a 409 CONFLICT naming deadlineSeconds; the same deadline is the same request (200)', async () => {
    orc = await startTestOrchestrator();
    const created = await post({ ...TRIGGER, deadlineSeconds: 600 });
    expect(created.status).toBe(201);
    const run = created.body as FlowRun;

    expectDeadlineConflict(await post({ ...TRIGGER, deadlineSeconds: 900 }), run, 900, 600);
    // no deadlineSeconds = the configured default (3600 s), which is not 600 s either
    expectDeadlineConflict(await post(TRIGGER), run, 3600, 600);

    const again = await post({ ...TRIGGER, deadlineSeconds: 600 });
    expect(again.status).toBe(200);
    expect((again.body as FlowRun).runId).toBe(run.runId);
    expect((await orc.store.list({ limit: 10, idempotencyKey: KEY })).runs).toHaveLength(1);
  });

  it('compares the effective deadline: the default spelled out is the same request', async () => {
    orc = await startTestOrchestrator({ env: { TDA_DEFAULT_RUN_DEADLINE_SECONDS: '1800' } });
    const created = await post(TRIGGER);
    expect(created.status).toBe(201);
    expect((await post({ ...TRIGGER, deadlineSeconds: 1800 })).status).toBe(200);
    expectDeadlineConflict(
      await post({ ...TRIGGER, deadlineSeconds: 3600 }),
      created.body as FlowRun,
      3600,
      1800,
    );
  });

  it('no deadline (TDA_DEFAULT_RUN_DEADLINE_SECONDS=0) differs from any requested one', async () => {
    orc = await startTestOrchestrator({ env: { TDA_DEFAULT_RUN_DEADLINE_SECONDS: '0' } });
    const created = await post(TRIGGER);
    expect(created.status).toBe(201);
    expect((created.body as FlowRun).deadlineAt).toBeUndefined();
    expect((await post(TRIGGER)).status).toBe(200);
    expectDeadlineConflict(
      await post({ ...TRIGGER, deadlineSeconds: 600 }),
      created.body as FlowRun,
      600,
      null,
    );
  });

  it('a run whose deadline a retry renewed still has its window: the same request is a 200', async () => {
    const clock = new ManualClock();
    orc = await startTestOrchestrator({ clock });
    const run = (await post({ ...TRIGGER, deadlineSeconds: 600 })).body as FlowRun;
    // What decideRetry writes: deadlineAt = retriedAt + the window, the retry in retryHistory.
    clock.advance(2_000_000);
    const stored = await orc.store.get(run.runId);
    if (stored === null) throw new Error('run missing');
    const retriedAt = clock.now();
    await orc.store.update(
      run.runId,
      {
        deadlineAt: new Date(retriedAt.getTime() + 600_000).toISOString(),
        retryHistory: [{ retriedAt: retriedAt.toISOString(), stepIds: [], reopened: [] }],
      },
      stored.version,
    );
    const again = await post({ ...TRIGGER, deadlineSeconds: 600 });
    expect(again.status).toBe(200);
    expectDeadlineConflict(await post({ ...TRIGGER, deadlineSeconds: 900 }), run, 900, 600);
  });
});
