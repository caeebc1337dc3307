import { InMemoryArtifactStore } from '@tda/artifacts';
import type { FlowRun } from '@tda/contracts';
import { InMemoryFlowRunStore, VersionConflictError } from '@tda/flow-store';
import { makeFlowRun, makeStep } from '@tda/flow-store/testing';
import type { MessageBroker, OutgoingMessage, SubscriptionHandle } from '@tda/messaging';
import { callExecute, callRecover, type StepContext, type StepResult } from '@tda/worker-kit';
import { TestStepHandler } from '@tda/worker-kit/testing';
import { describe, expect, it } from 'vitest';
import { ChaosBroker } from './chaos-broker';
import { ChaosController } from './chaos-controller';
import type { ChaosPlan, RunPlan } from './chaos-plan';
import { ChaosFlowRunStore, FinalizeHoldingStore, InjectedStoreError } from './chaos-store';
import { countingHandler, type ExecutionRecord } from './counting-handler';

function controller(...runs: Omit<RunPlan, 'index' | 'expected'>[]): ChaosController {
  const plan: ChaosPlan = {
    seed: 1,
    runs: runs.map((run, index) => ({ index, expected: 'SUCCEEDED', ...run })),
  };
  return new ChaosController(plan);
}

/** A broker that records what reaches it. */
class RecordingBroker implements MessageBroker {
  readonly published: { topic: string; message: OutgoingMessage; at: number }[] = [];
  private id = 0;

  publish(topic: string, message: OutgoingMessage): Promise<string> {
    this.published.push({ topic, message, at: Date.now() });
    this.id += 1;
    return Promise.resolve(String(this.id));
  }

  subscribe(): Promise<SubscriptionHandle> {
    return Promise.resolve({ close: () => Promise.resolve() });
  }

  seek(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

const stepReady = (runId: string, stepId: string): OutgoingMessage => ({
  data: { runId, stepId },
  attributes: { messageType: 'step_ready', runId, stepId },
});
const stepEvent = (runId: string, stepId: string): OutgoingMessage => ({
  data: { runId, stepId },
  attributes: { messageType: 'step_event', runId, stepId },
});

describe('ChaosBroker', () => {
  it("loses the orchestrator's first step-ready publish of the planned step, and only that one", async () => {
    const chaos = controller({
      ownerId: 'o-1',
      faults: ['orchestrator_crash'],
      crash: { stepId: 's:1' },
    });
    chaos.bind({ runId: 'run-1', ownerId: 'o-1' });
    const inner = new RecordingBroker();
    const orchestrator = new ChaosBroker(inner, { chaos, service: 'orchestrator' });
    const worker = new ChaosBroker(inner, { chaos, service: 'worker-ohlcv-export' });

    expect(await orchestrator.publish('t', stepReady('run-1', 's:1'))).toMatch(/^chaos-lost-/);
    await orchestrator.publish('t', stepReady('run-1', 's:1'));
    await orchestrator.publish('t', stepReady('run-1', 's:2'));
    await worker.publish('e', stepEvent('run-1', 's:1'));
    await orchestrator.publish('t', stepReady('other-run', 's:1'));

    expect(inner.published.map((p) => `${p.topic} ${JSON.stringify(p.message.data)}`)).toEqual([
      't {"runId":"run-1","stepId":"s:1"}',
      't {"runId":"run-1","stepId":"s:2"}',
      'e {"runId":"run-1","stepId":"s:1"}',
      't {"runId":"other-run","stepId":"s:1"}',
    ]);
    expect(chaos.injected.map((f) => [f.kind, f.action, f.stepId])).toEqual([
      ['orchestrator_crash', 'publish_lost', 's:1'],
    ]);
  });

  it('sends the planned number of extra copies of step-ready and step-event messages, later', async () => {
    const chaos = controller({
      ownerId: 'o-1',
      faults: ['duplicate_reorder'],
      duplicates: { copies: 2, maxDelayMs: 30 },
    });
    chaos.bind({ runId: 'run-1', ownerId: 'o-1' });
    const inner = new RecordingBroker();
    const broker = new ChaosBroker(inner, { chaos, service: 'worker-chart-export' });

    await broker.publish('t', stepReady('run-1', 's:1'));
    await broker.publish('e', stepEvent('run-1', 's:1'));
    await broker.publish('x', { data: { other: true }, attributes: { runId: 'run-1' } });
    await broker.drain();

    const copies = (topic: string): number =>
      inner.published.filter((p) => p.topic === topic).length;
    expect(copies('t')).toBe(3);
    expect(copies('e')).toBe(3);
    expect(copies('x')).toBe(1);
    expect(chaos.injectedFor('duplicate_reorder', 'duplicate')).toHaveLength(4);
    // Same plan and seed → the same decisions (copies, delays, held originals).
    const again = controller({
      ownerId: 'o-1',
      faults: ['duplicate_reorder'],
      duplicates: { copies: 2, maxDelayMs: 30 },
    });
    again.bind({ runId: 'run-1', ownerId: 'o-1' });
    const replay = new ChaosBroker(new RecordingBroker(), {
      chaos: again,
      service: 'worker-chart-export',
    });
    await replay.publish('t', stepReady('run-1', 's:1'));
    await replay.publish('e', stepEvent('run-1', 's:1'));
    await replay.drain();
    expect(again.injected.map((f) => f.detail)).toEqual(chaos.injected.map((f) => f.detail));
  });

  it('passes unplanned runs through untouched', async () => {
    const chaos = controller({
      ownerId: 'o-1',
      faults: ['duplicate_reorder'],
      duplicates: { copies: 1, maxDelayMs: 10 },
    });
    const inner = new RecordingBroker();
    const broker = new ChaosBroker(inner, { chaos, service: 'orchestrator' });
    await broker.publish('t', stepReady('unbound', 's:1'));
    await broker.drain();
    expect(inner.published).toHaveLength(1);
    expect(chaos.injected).toEqual([]);
  });
});

function runFor(ownerId: string, suffix = 'abc'): FlowRun {
  return makeFlowRun({
    ownerId,
    suffix,
    steps: {
      'ohlcv_export:1d': makeStep({ status: 'RUNNING', attempt: 1 }),
      'charts:1d:x': makeStep({
        stepType: 'CHART_EXPORT',
        status: 'PENDING',
        dependsOn: ['ohlcv_export:1d'],
      }),
    },
  });
}

describe('ChaosFlowRunStore', () => {
  const uri = 'gs://tda-artifacts/runs/r/1d/ohlcv_export:1d.json';
  const finalize = {
    'steps.ohlcv_export:1d.status': 'SUCCEEDED',
    'steps.ohlcv_export:1d.outputs.gcs_uri': uri,
  };

  it('binds created runs to their plan by owner (orchestrator only)', async () => {
    const chaos = controller({ ownerId: 'o-1', faults: ['duplicate_reorder'] });
    const inner = new InMemoryFlowRunStore();
    const run = runFor('o-1');
    await new ChaosFlowRunStore(inner, { chaos }).create(runFor('o-2'));
    expect(chaos.planFor(run.runId)).toBeUndefined();
    await new ChaosFlowRunStore(new InMemoryFlowRunStore(), { chaos, bindRuns: true }).create(run);
    expect(chaos.planFor(run.runId)?.index).toBe(0);
  });

  it('fails the first N finalize writes of the planned step after checking its artifact, then lets them through', async () => {
    const chaos = controller({
      ownerId: 'o-1',
      faults: ['finalize_write_failed'],
      finalizeFailure: { stepId: 'ohlcv_export:1d', failures: 2 },
    });
    const artifacts = new InMemoryArtifactStore();
    await artifacts.put(uri, Buffer.from('{}'), { contentType: 'application/json' });
    const inner = new InMemoryFlowRunStore();
    const store = new ChaosFlowRunStore(inner, {
      chaos,
      bindRuns: true,
      failFinalize: { artifacts },
    });
    const created = await store.create(runFor('o-1'));
    const runId = created.run.runId;

    // A heartbeat-like write is not a finalize: it passes.
    const beat = await store.update(
      runId,
      { 'steps.ohlcv_export:1d.progress': { stage: 'x', updatedAt: created.run.createdAt } },
      created.version,
    );
    await expect(store.update(runId, finalize, beat.version)).rejects.toBeInstanceOf(
      InjectedStoreError,
    );
    await expect(store.update(runId, finalize, beat.version)).rejects.toBeInstanceOf(
      InjectedStoreError,
    );
    const done = await store.update(runId, finalize, beat.version);
    expect(done.run.steps['ohlcv_export:1d']?.status).toBe('SUCCEEDED');
    expect(chaos.injected.map((f) => f.detail)).toEqual([
      { failure: 1, of: 2, artifactWritten: true },
      { failure: 2, of: 2, artifactWritten: true },
    ]);
  });

  it('counts the version conflicts the real store raises for planned runs', async () => {
    const chaos = controller({ ownerId: 'o-1', faults: ['conflicting_writer'] });
    const store = new ChaosFlowRunStore(new InMemoryFlowRunStore(), { chaos, bindRuns: true });
    const created = await store.create(runFor('o-1'));
    await store.update(created.run.runId, {}, created.version);
    await expect(store.update(created.run.runId, {}, created.version)).rejects.toBeInstanceOf(
      VersionConflictError,
    );
    expect(chaos.conflicts.get(created.run.runId)).toBe(1);
  });
});

describe('FinalizeHoldingStore', () => {
  it("holds the planned step's SUCCEEDED write forever (once the run's owner is known), nothing else", async () => {
    const inner = new InMemoryFlowRunStore();
    const held: string[] = [];
    const store = new FinalizeHoldingStore(
      inner,
      [{ ownerId: 'o-1', stepId: 'ohlcv_export:1d' }],
      (runId, stepId, uri) => held.push(`${runId} ${stepId} ${uri ?? '-'}`),
    );
    const mine = await store.create(runFor('o-1'));
    const other = await inner.create(runFor('o-2', 'xyz'));
    const finalize = {
      'steps.ohlcv_export:1d.status': 'SUCCEEDED',
      'steps.ohlcv_export:1d.outputs.gcs_uri': 'gs://b/a.json',
    };
    await store.get(mine.run.runId);
    await store.get(other.run.runId);
    // Another run's finalize and this run's other writes pass.
    await store.update(other.run.runId, finalize, other.version);
    const beat = await store.update(mine.run.runId, {}, mine.version);
    const settled = await Promise.race([
      store.update(mine.run.runId, finalize, beat.version).then(() => 'written'),
      new Promise((resolve) => setTimeout(() => resolve('held'), 50)),
    ]);
    expect(settled).toBe('held');
    expect(held).toEqual([`${mine.run.runId} ohlcv_export:1d gs://b/a.json`]);
    expect((await inner.get(mine.run.runId))?.run.steps['ohlcv_export:1d']?.status).toBe('RUNNING');
  });
});

describe('countingHandler', () => {
  const context = (attempt: number): StepContext =>
    ({
      run: { runId: 'run-1' },
      stepId: 's:1',
      attempt,
    }) as unknown as StepContext;
  const result: StepResult = { artifacts: [], primaryUri: 'gs://b/x.json' };

  it('records start/completed/threw per attempt and keeps the handler as it is', async () => {
    const records: ExecutionRecord[] = [];
    let fail = true;
    const inner = new TestStepHandler('OHLCV_EXPORT');
    inner.executeImpl = () => (fail ? Promise.reject(new Error('boom')) : Promise.resolve(result));
    const counted = countingHandler(inner, 'svc', (r) => records.push(r));
    expect(counted.descriptor).toBe(inner.descriptor);
    expect(counted.recover).toBeUndefined();
    await expect(callExecute(counted, context(1))).rejects.toThrow('boom');
    fail = false;
    expect(await callExecute(counted, context(1))).toBe(result);
    expect(records.map((r) => `${r.phase}@${r.attempt}`)).toEqual([
      'start@1',
      'threw@1',
      'start@1',
      'completed@1',
    ]);
  });

  it('keeps recover when the handler has one, and records it', async () => {
    const records: ExecutionRecord[] = [];
    const inner = new TestStepHandler('CHART_EXPORT').withRecover(() => Promise.resolve(null));
    const counted = countingHandler(inner, 'svc', (r) => records.push(r));
    const existing = {
      uri: 'gs://b/x.json',
      artifact: { runId: 'run-1', stepId: 's:1' },
      bytes: Buffer.from('{}'),
    };
    expect(await callRecover(counted, existing, context(2))).toBeNull();
    expect(inner.recoveries).toBe(1);
    expect(records.map((r) => `${r.phase}@${r.attempt}`)).toEqual(['recover@2']);
  });
});
