import 'reflect-metadata';
import { InMemoryArtifactStore } from '@tda/artifacts';
import type { StepEventMessage } from '@tda/contracts';
import { InMemoryFlowRunStore } from '@tda/flow-store';
import { makeFlowRun } from '@tda/flow-store/testing';
import {
  BrokerPublisher,
  buildTopology,
  InMemoryBroker,
  stepEventsSubscription,
  type MessageBroker,
} from '@tda/messaging';
import { createMemoryLogger } from '@tda/observability';
import { expectEventually } from '@tda/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { createStepWorker } from './step-worker.factory';
import { TestStepHandler } from './testing';

const STEP_ID = 'ohlcv_export:1d';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** An in-memory bus with the topology of `prefix` (1/100 of the production timings). */
function brokerWithTopology(prefix: string): InMemoryBroker {
  const broker = new InMemoryBroker({ timeScale: 0.01 });
  broker.applyTopology(buildTopology({ prefix }));
  cleanups.push(() => broker.close());
  return broker;
}

async function collectStepEvents(
  broker: MessageBroker,
  prefix: string,
): Promise<StepEventMessage[]> {
  const events: StepEventMessage[] = [];
  const subscription = await broker.subscribe(
    stepEventsSubscription(prefix),
    (message) => {
      events.push(JSON.parse(message.data.toString('utf8')) as StepEventMessage);
      message.ack();
    },
    { maxInFlight: 10 },
  );
  cleanups.push(() => subscription.close());
  return events;
}

describe('createStepWorker', () => {
  it('runs a READY step delivered on its step-ready subscription to SUCCEEDED, on the given prefix and artifact names', async () => {
    const prefix = 'tdx';
    const broker = brokerWithTopology(prefix);
    const store = new InMemoryFlowRunStore();
    const artifacts = new InMemoryArtifactStore();
    const handler = new TestStepHandler('OHLCV_EXPORT');
    const events = await collectStepEvents(broker, prefix);
    const run = makeFlowRun();
    expect(run.steps[STEP_ID]?.status).toBe('READY');
    await store.create(run);

    const { app } = await createStepWorker({
      handler,
      store,
      broker,
      artifacts,
      logger: createMemoryLogger().logger,
      prefix,
      policy: { artifactBucket: 'bucket-x', artifactPrefix: 'p/q' },
      owner: 'step-worker-test',
      drainTimeoutMs: 1_000,
    });
    await app.listen();
    cleanups.push(() => app.close());
    await new BrokerPublisher({ publisher: broker, prefix }).publishStepReady({
      runId: run.runId,
      stepId: STEP_ID,
      stepType: 'OHLCV_EXPORT',
      attempt: 0,
      dispatchedAt: new Date().toISOString(),
    });

    // The step event goes to the prefix's topic although policy.topicPrefix was not given.
    await expectEventually(() => {
      expect(events).toEqual([
        expect.objectContaining({ runId: run.runId, stepId: STEP_ID, status: 'SUCCEEDED' }),
      ]);
    });
    const step = (await store.get(run.runId))?.run.steps[STEP_ID];
    const uri = `gs://bucket-x/p/q/${run.runId}/1d/${STEP_ID}.json`;
    expect(step).toMatchObject({
      status: 'SUCCEEDED',
      attempt: 1,
      outputs: { gcs_uri: uri, execution: { worker: 'step-worker-test' } },
    });
    expect(await artifacts.exists(uri)).toBe(true);
    expect(handler.executions).toBe(1);
  });

  it('consumes only the subscription of its handler step type', async () => {
    const broker = brokerWithTopology('tda');
    const store = new InMemoryFlowRunStore();
    const handler = new TestStepHandler('CHART_EXPORT');
    const log = createMemoryLogger();
    const { app } = await createStepWorker({
      handler,
      store,
      broker,
      artifacts: new InMemoryArtifactStore(),
      logger: log.logger,
      drainTimeoutMs: 1_000,
    });
    await app.listen();
    cleanups.push(() => app.close());
    const publisher = new BrokerPublisher({ publisher: broker });
    const run = makeFlowRun();
    await store.create(run);
    // A step-ready message for another step type sits on another subscription: never delivered.
    await publisher.publishStepReady({
      runId: run.runId,
      stepId: STEP_ID,
      stepType: 'OHLCV_EXPORT',
      attempt: 0,
      dispatchedAt: new Date().toISOString(),
    });
    await publisher.publishStepReady({
      runId: run.runId,
      stepId: 'chart_export:1d',
      stepType: 'CHART_EXPORT',
      attempt: 0,
      dispatchedAt: new Date().toISOString(),
    });
    await expectEventually(() => {
      expect(log.withEvent('message_acked')).toHaveLength(1);
    });
    expect(log.withEvent('message_acked')[0]).toMatchObject({
      subscription: 'tda-step-ready-chart-export-sub',
      outcome: 'noop',
      reason: 'unknown_step',
    });
    expect(handler.executions).toBe(0);
    expect((await store.get(run.runId))?.run.steps[STEP_ID]?.status).toBe('READY');
  });
});
