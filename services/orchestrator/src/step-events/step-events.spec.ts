import type { FlowRun, StepType } from '@tda/contracts';
import {
  InMemoryBroker,
  stepEventsTopic,
  type MessageBroker,
  type MessageListener,
  type OutgoingMessage,
  type SubscribeOptions,
  type SubscriptionHandle,
} from '@tda/messaging';
import { afterEach, describe, expect, it } from 'vitest';
import {
  collectStepReady,
  makeTestBroker,
  publishStepEvent,
  simulateWorker,
  startTestOrchestrator,
  type TestOrchestrator,
} from '../testing/orchestrator.harness';

const TRIGGER = { flowKey: 'scheduled_month_week_report_v1', scope: { symbol: 'BTC-USDT' } };
const ALL_STEP_TYPES: StepType[] = ['OHLCV_EXPORT', 'CHART_EXPORT', 'LLM_REPORT'];

/** Delegates to an InMemoryBroker; publishes to step-ready topics fail while `failing` is set. */
class FlakyBroker implements MessageBroker {
  failing = false;
  attemptedWhileFailing = 0;

  constructor(private readonly inner: InMemoryBroker) {}

  publish(topic: string, message: OutgoingMessage): Promise<string> {
    if (this.failing && topic !== stepEventsTopic()) {
      this.attemptedWhileFailing += 1;
      return Promise.reject(new Error('pubsub unavailable'));
    }
    return this.inner.publish(topic, message);
  }

  subscribe(
    subscription: string,
    onMessage: MessageListener,
    options: SubscribeOptions,
  ): Promise<SubscriptionHandle> {
    return this.inner.subscribe(subscription, onMessage, options);
  }

  seek(subscription: string, time: Date): Promise<void> {
    return this.inner.seek(subscription, time);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

async function trigger(orc: TestOrchestrator): Promise<FlowRun> {
  const res = await orc.request('POST', '/runs', { body: TRIGGER });
  expect(res.status).toBe(201);
  return res.body as FlowRun;
}

/** Worker side of one step: claim + finalize through the store, then the step event. */
async function completeStep(
  orc: TestOrchestrator,
  run: FlowRun,
  stepId: string,
  status: 'SUCCEEDED' | 'FAILED' = 'SUCCEEDED',
): Promise<void> {
  const attempt = await simulateWorker(orc.store, run.runId, stepId, orc.clock.now, { status });
  const stepType = run.steps[stepId]?.stepType;
  if (stepType === undefined) throw new Error(`no step ${stepId}`);
  await publishStepEvent(orc.broker, {
    runId: run.runId,
    stepId,
    stepType,
    status,
    attempt,
    at: orc.clock.now().toISOString(),
  });
}

function ackedEvents(orc: TestOrchestrator): Record<string, unknown>[] {
  return orc.logs.withEvent('message_acked').filter((r) => r['messageType'] === 'step_event');
}

const settle = (ms = 50) => new Promise((resolve) => setTimeout(resolve, ms));

describe('step-event consumer', () => {
  let orc: TestOrchestrator | undefined;

  afterEach(async () => {
    await orc?.close();
    orc = undefined;
  });

  it('advances on a step event and publishes the next step-ready; a duplicate event publishes nothing', async () => {
    orc = await startTestOrchestrator();
    const consumer = await collectStepReady(orc.broker, ALL_STEP_TYPES);
    const run = await trigger(orc);
    await expect.poll(() => consumer.received.length).toBe(2);

    await completeStep(orc, run, 'ohlcv_export:1M');
    await expect.poll(() => consumer.received.length).toBe(3);
    const next = consumer.received[2];
    expect(next?.body).toMatchObject({
      runId: run.runId,
      stepId: 'charts:1M:ctpl_default_v1',
      stepType: 'CHART_EXPORT',
      reason: 'advance',
    });
    expect(next?.attributes['messageType']).toBe('step_ready');
    const stored = await orc.store.get(run.runId);
    expect(stored?.run.steps['charts:1M:ctpl_default_v1']?.status).toBe('READY');
    const version = stored?.version;

    // the same event again (at-least-once delivery)
    await publishStepEvent(orc.broker, {
      runId: run.runId,
      stepId: 'ohlcv_export:1M',
      stepType: 'OHLCV_EXPORT',
      status: 'SUCCEEDED',
      attempt: 1,
      at: orc.clock.now().toISOString(),
    });
    await expect.poll(() => ackedEvents(orc as TestOrchestrator).length).toBe(2);
    expect(ackedEvents(orc)[1]).toMatchObject({ outcome: 'noop', reason: 'already_advanced' });
    await settle();
    expect(consumer.received).toHaveLength(3);
    expect((await orc.store.get(run.runId))?.version).toBe(version);
    await consumer.close();
  });

  it('drives flow 1 to SUCCEEDED, one step-ready per step', async () => {
    orc = await startTestOrchestrator();
    const consumer = await collectStepReady(orc.broker, ALL_STEP_TYPES);
    const run = await trigger(orc);
    const done = new Set<string>();
    const total = Object.keys(run.steps).length;
    while (done.size < total) {
      await expect.poll(() => consumer.received.some((m) => !done.has(m.body.stepId))).toBe(true);
      const message = consumer.received.find((m) => !done.has(m.body.stepId));
      if (message === undefined) break;
      done.add(message.body.stepId);
      orc.clock.advance(1_000);
      await completeStep(orc, run, message.body.stepId);
    }
    await expect.poll(async () => (await orc?.store.get(run.runId))?.run.status).toBe('SUCCEEDED');
    const final = (await orc.store.get(run.runId))?.run;
    expect(Object.values(final?.steps ?? {}).every((s) => s.status === 'SUCCEEDED')).toBe(true);
    expect(final?.progress).toMatchObject({ total, succeeded: total });
    expect(final?.finishedAt).toBeDefined();
    await settle();
    expect(consumer.received.map((m) => m.body.stepId).sort()).toEqual(
      Object.keys(run.steps).sort(),
    );
    await consumer.close();
  });

  it('a FAILED step fails the run and cancels what has not started; nothing more is dispatched', async () => {
    orc = await startTestOrchestrator();
    const consumer = await collectStepReady(orc.broker, ALL_STEP_TYPES);
    const run = await trigger(orc);
    await expect.poll(() => consumer.received.length).toBe(2);
    await completeStep(orc, run, 'ohlcv_export:1w', 'FAILED');
    await expect.poll(async () => (await orc?.store.get(run.runId))?.run.status).toBe('FAILED');
    const failed = (await orc.store.get(run.runId))?.run;
    expect(failed?.error).toMatchObject({
      code: 'MARKET_DATA_UNAVAILABLE',
      details: { stepId: 'ohlcv_export:1w' },
    });
    expect(failed?.steps['ohlcv_export:1M']?.status).toBe('CANCELLED');
    expect(failed?.steps['charts:1w:ctpl_default_v1']?.status).toBe('CANCELLED');
    await settle();
    expect(consumer.received).toHaveLength(2);
    await consumer.close();
  });

  it('nacks when step-ready cannot be published, and publishes on the redelivery', async () => {
    const flaky = new FlakyBroker(makeTestBroker());
    orc = await startTestOrchestrator({ broker: flaky });
    const consumer = await collectStepReady(flaky, ALL_STEP_TYPES);
    const run = await trigger(orc);
    await expect.poll(() => consumer.received.length).toBe(2);

    await simulateWorker(orc.store, run.runId, 'ohlcv_export:1M', orc.clock.now);
    flaky.failing = true;
    await publishStepEvent(flaky, {
      runId: run.runId,
      stepId: 'ohlcv_export:1M',
      stepType: 'OHLCV_EXPORT',
      status: 'SUCCEEDED',
      attempt: 1,
      at: orc.clock.now().toISOString(),
    });
    await expect.poll(() => orc?.logs.withEvent('message_handler_failed').length).toBe(1);
    expect(orc.logs.withEvent('message_handler_failed')[0]).toMatchObject({ action: 'nack' });
    // the advance itself was written before the publish failed
    const written = await orc.store.get(run.runId);
    expect(written?.run.steps['charts:1M:ctpl_default_v1']?.status).toBe('READY');
    expect(ackedEvents(orc)).toHaveLength(0);
    flaky.failing = false;

    await expect.poll(() => consumer.received.length, { timeout: 5_000 }).toBe(3);
    expect(consumer.received[2]?.body).toMatchObject({
      stepId: 'charts:1M:ctpl_default_v1',
      reason: 'retry',
    });
    await expect.poll(() => ackedEvents(orc as TestOrchestrator).length).toBe(1);
    expect(ackedEvents(orc)[0]).toMatchObject({ outcome: 'processed', deliveryAttempt: 2 });
    // the redelivery found nothing left to write
    expect((await orc.store.get(run.runId))?.version).toBe(written?.version);
    const metrics = await fetch(`${orc.baseUrl}/metrics`).then((r) => r.text());
    expect(metrics).toContain(
      'tda_messages_handled_total{service="orchestrator",subscription="tda-step-events-sub",outcome="nack"} 1',
    );
    expect(metrics).toContain(
      'tda_messages_handled_total{service="orchestrator",subscription="tda-step-events-sub",outcome="ack"} 1',
    );
    expect(metrics).toContain(
      'tda_steps_dispatched_total{service="orchestrator",step_type="CHART_EXPORT",reason="retry"} 1',
    );
    await consumer.close();
  });

  it('acks an event that violates the contract as invalid and one for an unknown run as a no-op', async () => {
    orc = await startTestOrchestrator();
    const publisher = orc.broker;
    await publisher.publish(stepEventsTopic(), {
      data: { runId: 'nope', status: 'DONE' },
      attributes: { messageType: 'step_event' },
    });
    await expect.poll(() => orc?.logs.withEvent('message_invalid').length).toBe(1);
    await publishStepEvent(publisher, {
      runId: '20250115-100000_BTC-USDT_zzzzz',
      stepId: 'ohlcv_export:1M',
      stepType: 'OHLCV_EXPORT',
      status: 'SUCCEEDED',
      attempt: 1,
      at: orc.clock.now().toISOString(),
    });
    await expect.poll(() => ackedEvents(orc as TestOrchestrator).length).toBe(1);
    expect(ackedEvents(orc)[0]).toMatchObject({ outcome: 'noop', reason: 'run_not_found' });
    expect((await orc.store.list({ limit: 10 })).runs).toEqual([]);
  });
});
