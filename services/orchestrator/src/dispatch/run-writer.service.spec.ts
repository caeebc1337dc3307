import type { FlowRun, StepReadyMessage, StepStatus } from '@tda/contracts';
import type { RunPatch } from '@tda/flow-engine';
import { makeRun, T0 } from '@tda/flow-engine/testing';
import {
  ConflictRetriesExhaustedError,
  InMemoryFlowRunStore,
  VersionConflictError,
  type FlowRunStore,
  type VersionedRun,
} from '@tda/flow-store';
import type { OutgoingMessage, Publisher } from '@tda/messaging';
import { createMemoryLogger, createMetrics, type MemoryLogger } from '@tda/observability';
import { beforeEach, describe, expect, it } from 'vitest';
import { StepDispatchError } from '../orchestrator.errors';
import { advanceDecision } from './advance.decision';
import type { DispatchPolicy, RunDecision } from './run-decision.types';
import { RunWriter } from './run-writer.service';
import { StepDispatcher } from './step-dispatcher.service';

const D1 = 'ohlcv_export:1d';
const W1 = 'ohlcv_export:1w';
/** A queued run with two independent steps: its advance starts it and makes both READY. */
const QUEUED: FlowRun = makeRun({ [D1]: { timeframe: '1d' }, [W1]: { timeframe: '1w' } });
const RUN_ID = QUEUED.runId;

interface Published {
  topic: string;
  body: StepReadyMessage;
  /** The step's status in the store when the message went out. */
  storedStatus: StepStatus | undefined;
}

/** Records step-ready messages with what the store held at that moment; fails on demand. */
class RecordingPublisher implements Publisher {
  failing = false;
  readonly published: Published[] = [];

  constructor(private readonly store: Pick<FlowRunStore, 'get'>) {}

  async publish(topic: string, message: OutgoingMessage): Promise<string> {
    if (this.failing) throw new Error('pubsub unavailable');
    const body = message.data as StepReadyMessage;
    const stored = await this.store.get(body.runId);
    this.published.push({ topic, body, storedStatus: stored?.run.steps[body.stepId]?.status });
    return `message-${this.published.length}`;
  }
}

/** Before the first `update`, another writer lands `rivalPatch` (the caller's write conflicts). */
class RivalWriteStore implements Pick<FlowRunStore, 'get' | 'update'> {
  updates = 0;

  constructor(
    private readonly inner: FlowRunStore,
    private readonly rivalPatch: RunPatch,
  ) {}

  get(runId: string): Promise<VersionedRun | null> {
    return this.inner.get(runId);
  }

  async update(runId: string, patch: RunPatch, expectedVersion: string): Promise<VersionedRun> {
    this.updates += 1;
    if (this.updates === 1) {
      const current = await this.inner.get(runId);
      if (current !== null) await this.inner.update(runId, this.rivalPatch, current.version);
    }
    return this.inner.update(runId, patch, expectedVersion);
  }
}

/** Every update loses its race (a run written faster than we can decide). */
class AlwaysConflictingStore implements Pick<FlowRunStore, 'get' | 'update'> {
  updates = 0;

  constructor(private readonly inner: FlowRunStore) {}

  get(runId: string): Promise<VersionedRun | null> {
    return this.inner.get(runId);
  }

  update(runId: string, _patch: RunPatch, expectedVersion: string): Promise<VersionedRun> {
    this.updates += 1;
    return Promise.reject(new VersionConflictError(runId, expectedVersion));
  }
}

interface Fixture {
  store: InMemoryFlowRunStore;
  publisher: RecordingPublisher;
  logs: MemoryLogger;
  metrics: ReturnType<typeof createMetrics>;
  writer(store?: Pick<FlowRunStore, 'get' | 'update'>): RunWriter;
}

async function fixture(): Promise<Fixture> {
  const clock = (): Date => new Date(T0);
  const store = new InMemoryFlowRunStore({ clock });
  await store.create(QUEUED);
  const publisher = new RecordingPublisher(store);
  const logs = createMemoryLogger({ service: 'orchestrator-test', level: 'debug' });
  const metrics = createMetrics({ service: 'orchestrator' });
  const config = { TDA_PUBSUB_PREFIX: 'tda' };
  const dispatcher = new StepDispatcher(publisher, config, logs.logger, metrics, clock);
  // random 0: no backoff between conflict rounds
  const writer = (over: Pick<FlowRunStore, 'get' | 'update'> = store): RunWriter =>
    new RunWriter(over, dispatcher, logs.logger, metrics, clock, () => 0);
  return { store, publisher, logs, metrics, writer };
}

const advanceNow = (run: FlowRun, now: Date): RunDecision<unknown> => advanceDecision(run, now);

describe('RunWriter', () => {
  let f: Fixture;

  beforeEach(async () => {
    f = await fixture();
  });

  it('writes a decision, logs run_advanced with the cause and dispatches its steps after the write', async () => {
    const outcome = await f.writer().apply(RUN_ID, advanceNow, 'trigger', 'throw');

    expect(outcome).toMatchObject({ kind: 'written', run: { status: 'RUNNING' } });
    if (outcome.kind === 'not_found') throw new Error('unreachable');
    expect(outcome.dispatched.map((d) => [d.stepId, d.reason])).toEqual([
      [D1, 'advance'],
      [W1, 'advance'],
    ]);
    expect(f.publisher.published.map((p) => p.storedStatus)).toEqual(['READY', 'READY']);
    expect(f.publisher.published[0]?.topic).toBe('tda-step-ready-ohlcv-export');
    expect(f.logs.withEvent('run_advanced')).toEqual([
      expect.objectContaining({
        runId: RUN_ID,
        cause: 'trigger',
        previousStatus: 'PENDING',
        status: 'RUNNING',
        newlyReady: [D1, W1],
      }),
    ]);
    expect(await f.metrics.render()).toContain(
      'tda_runs_advanced_total{service="orchestrator",run_status="RUNNING"} 1',
    );
  });

  it('answers noop for an empty patch: nothing written or logged, the decided dispatch still goes out on the run as read', async () => {
    await f.writer().apply(RUN_ID, advanceNow, 'trigger', 'throw');
    const before = await f.store.get(RUN_ID);
    f.logs.clear();
    f.publisher.published.length = 0;

    const outcome = await f
      .writer()
      .apply(RUN_ID, (run, now) => advanceDecision(run, now, [W1]), 'step_event', 'throw');

    expect(outcome).toMatchObject({ kind: 'noop', run: { status: 'RUNNING' } });
    expect((await f.store.get(RUN_ID))?.version).toBe(before?.version);
    expect(f.logs.withEvent('run_advanced')).toEqual([]);
    expect(f.publisher.published.map((p) => [p.body.stepId, p.body.reason])).toEqual([
      [W1, 'retry'],
    ]);
  });

  it('answers a noop decision with its result and never writes it', async () => {
    const outcome = await f
      .writer()
      .apply(
        RUN_ID,
        (run) => ({ kind: 'noop', reason: 'not_now', result: run.status }),
        'cancel',
        'log',
      );

    expect(outcome).toMatchObject({ kind: 'noop', result: 'PENDING', dispatched: [] });
    expect((await f.store.get(RUN_ID))?.run.status).toBe('PENDING');
  });

  it('answers not_found for an unknown run without deciding', async () => {
    let decided = 0;
    const outcome = await f.writer().apply(
      '20250115-100000_BTC-USDT_zzzzz',
      (run, now) => {
        decided += 1;
        return advanceDecision(run, now);
      },
      'trigger',
      'throw',
    );

    expect(outcome).toEqual({ kind: 'not_found' });
    expect(decided).toBe(0);
  });

  it('re-reads and re-decides after a conflict; only the decision that stood is written and dispatched', async () => {
    const rival = new RivalWriteStore(f.store, { [`steps.${W1}.status`]: 'SKIPPED' });
    const seen: StepStatus[] = [];
    const outcome = await f.writer(rival).apply(
      RUN_ID,
      (run, now) => {
        seen.push(run.steps[W1]?.status ?? 'PENDING');
        return advanceDecision(run, now);
      },
      'trigger',
      'throw',
    );

    expect(seen).toEqual(['PENDING', 'SKIPPED']);
    expect(rival.updates).toBe(2);
    expect(outcome).toMatchObject({ kind: 'written', result: { newlyReady: [D1] } });
    expect(f.publisher.published.map((p) => p.body.stepId)).toEqual([D1]);
    expect(f.logs.withEvent('run_advanced')).toHaveLength(1);
  });

  it('gives up after the bounded attempts of the call: nothing logged, nothing published', async () => {
    const racing = new AlwaysConflictingStore(f.store);

    await expect(
      f.writer(racing).apply(RUN_ID, advanceNow, 'reconcile', 'report', { maxAttempts: 3 }),
    ).rejects.toBeInstanceOf(ConflictRetriesExhaustedError);
    expect(racing.updates).toBe(3);
    expect(f.publisher.published).toEqual([]);
    expect(f.logs.withEvent('run_advanced')).toEqual([]);
  });

  it('publishes nothing when the write itself fails', async () => {
    const broken: Pick<FlowRunStore, 'get' | 'update'> = {
      get: (runId) => f.store.get(runId),
      update: () => Promise.reject(new Error('firestore unavailable')),
    };

    await expect(f.writer(broken).apply(RUN_ID, advanceNow, 'trigger', 'log')).rejects.toThrow(
      'firestore unavailable',
    );
    expect(f.publisher.published).toEqual([]);
    expect((await f.store.get(RUN_ID))?.run.status).toBe('PENDING');
  });

  describe('dispatch policy on a publish failure (the write stands in every case)', () => {
    const failingApply = (policy: DispatchPolicy) => {
      f.publisher.failing = true;
      return f.writer().apply(RUN_ID, advanceNow, 'retry', policy);
    };

    async function expectWritten(): Promise<void> {
      expect((await f.store.get(RUN_ID))?.run.status).toBe('RUNNING');
      expect(f.logs.withEvent('run_advanced')).toHaveLength(1);
    }

    it("'throw' rejects with the StepDispatchError (the step-event handler nacks)", async () => {
      const failure = await failingApply('throw').catch((error: unknown) => error);

      expect(failure).toBeInstanceOf(StepDispatchError);
      expect(failure).toMatchObject({ failedStepIds: [D1, W1] });
      await expectWritten();
    });

    it("'log' answers written with nothing dispatched and logs dispatch_failed", async () => {
      const outcome = await failingApply('log');

      expect(outcome).toMatchObject({ kind: 'written', dispatched: [] });
      expect(outcome).not.toHaveProperty('dispatchFailure');
      expect(f.logs.withEvent('dispatch_failed').map((l) => l['message'])).toContain(
        'step-ready publish after a retry write failed; the reconciler will republish',
      );
      await expectWritten();
    });

    it("'report' answers written with the failure for the caller to record", async () => {
      const outcome = await failingApply('report');

      expect(outcome).toMatchObject({ kind: 'written', dispatched: [] });
      if (outcome.kind === 'not_found') throw new Error('unreachable');
      expect(outcome.dispatchFailure).toBeInstanceOf(StepDispatchError);
      expect(outcome.dispatchFailure?.failedStepIds).toEqual([D1, W1]);
      await expectWritten();
    });
  });
});
