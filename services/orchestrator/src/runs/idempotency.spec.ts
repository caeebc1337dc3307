import type { FlowRun } from '@tda/contracts';
import { flowCatalogue, type RunPatch } from '@tda/flow-engine';
import { seededRandom } from '@tda/flow-engine/testing';
import {
  InMemoryFlowRunStore,
  type FlowRunStore,
  type RunListPage,
  type RunListQuery,
  type VersionedRun,
} from '@tda/flow-store';
import { afterEach, describe, expect, it } from 'vitest';
import {
  collectStepReady,
  ManualClock,
  startTestOrchestrator,
  type TestOrchestrator,
} from '../testing/orchestrator.harness';
import { KeyedMutex } from './keyed-mutex';

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
      now: clock.now(),
      random: seededRandom(5),
    });
    await store.create(crashed);
    const res = await orc.request('POST', '/runs', { body: TRIGGER });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ runId: crashed.runId, status: 'RUNNING' });
  });
});

describe('KeyedMutex', () => {
  it('runs work for one key one at a time in arrival order, other keys in parallel', async () => {
    const mutex = new KeyedMutex();
    const log: string[] = [];
    const step = (name: string, ms: number) => async () => {
      log.push(`${name}:start`);
      await new Promise((resolve) => setTimeout(resolve, ms));
      log.push(`${name}:end`);
      return name;
    };
    const results = await Promise.all([
      mutex.run('k', step('a1', 20)),
      mutex.run('k', step('a2', 1)),
      mutex.run('other', step('b', 5)),
    ]);
    expect(results).toEqual(['a1', 'a2', 'b']);
    expect(log.indexOf('a2:start')).toBeGreaterThan(log.indexOf('a1:end'));
    expect(log.indexOf('b:start')).toBeLessThan(log.indexOf('a1:end'));
    expect(mutex.size).toBe(0);
  });

  it('releases the key when the work throws', async () => {
    const mutex = new KeyedMutex();
    await expect(mutex.run('k', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(mutex.run('k', () => Promise.resolve('next'))).resolves.toBe('next');
    expect(mutex.size).toBe(0);
  });
});
