import 'reflect-metadata';
import { Module, type DynamicModule, type INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { InMemoryArtifactStore } from '@tda/artifacts';
import type { StepEventMessage } from '@tda/contracts';
import { InMemoryFlowRunStore } from '@tda/flow-store';
import { makeFlowRun } from '@tda/flow-store/testing';
import {
  BrokerPublisher,
  buildTopology,
  InMemoryBroker,
  STEP_EVENTS_SUBSCRIPTION,
  stepReadyTopic,
} from '@tda/messaging';
import { createMemoryLogger } from '@tda/observability';
import { expectEventually } from '@tda/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { startHealthServer } from '@tda/service-runtime';
import { WorkerConfigError } from './step-harness.registry';
import { CountingFlowRunStore, TestStepHandler, untilAborted } from './testing';
import { createWorkerMicroservice } from './worker-microservice.factory';
import { WorkerModule, type WorkerModuleOptions } from './worker.module';

const OHLCV = 'ohlcv_export:1d';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function adapters() {
  // 1/100 of the production topology: nack backoff 100 ms, ack deadline 600 ms.
  const broker = new InMemoryBroker({ timeScale: 0.01 });
  broker.applyTopology(buildTopology());
  cleanups.push(() => broker.close());
  const log = createMemoryLogger();
  const store = new CountingFlowRunStore(new InMemoryFlowRunStore());
  return { broker, log, store, artifacts: new InMemoryArtifactStore() };
}

function moduleOptions(
  a: ReturnType<typeof adapters>,
  overrides: Partial<WorkerModuleOptions> = {},
): WorkerModuleOptions {
  return {
    handlers: [new TestStepHandler('OHLCV_EXPORT')],
    store: a.store,
    broker: a.broker,
    artifacts: a.artifacts,
    logger: a.log.logger,
    owner: 'worker-test',
    policy: { infraBaseDelayMs: 1, artifactWriteBaseDelayMs: 1 },
    ...overrides,
  };
}

/** How a service composes it: its own module imports WorkerModule.forRoot(...). */
@Module({})
class ServiceModule {
  static forRoot(options: WorkerModuleOptions): DynamicModule {
    return { module: ServiceModule, imports: [WorkerModule.forRoot(options)] };
  }
}

async function boot(
  options: WorkerModuleOptions,
  drainTimeoutMs = 2_000,
): Promise<INestMicroservice> {
  const a = options;
  const { app } = await createWorkerMicroservice(ServiceModule.forRoot(options), {
    broker: a.broker,
    stepTypes: a.handlers.map((h) => h.descriptor.stepType),
    logger: a.logger,
    drainTimeoutMs,
  });
  await app.listen();
  cleanups.push(() => app.close());
  return app;
}

describe('WorkerModule — boot checks', () => {
  it('refuses to boot with two handlers for one step type', async () => {
    const a = adapters();
    const options = moduleOptions(a, {
      handlers: [new TestStepHandler('OHLCV_EXPORT'), new TestStepHandler('OHLCV_EXPORT')],
    });
    await expect(
      NestFactory.createApplicationContext(WorkerModule.forRoot(options), {
        logger: false,
        abortOnError: false,
      }),
    ).rejects.toThrow(/two handlers for step type OHLCV_EXPORT/);
  });

  it('refuses to boot when a consumed step type has no handler (module option or subscription list)', async () => {
    const a = adapters();
    await expect(
      NestFactory.createApplicationContext(
        WorkerModule.forRoot(moduleOptions(a, { stepTypes: ['OHLCV_EXPORT', 'CHART_EXPORT'] })),
        { logger: false, abortOnError: false },
      ),
    ).rejects.toThrow(/consume step type CHART_EXPORT but no handler serves it/);

    const attempt = createWorkerMicroservice(WorkerModule.forRoot(moduleOptions(a)), {
      broker: a.broker,
      stepTypes: ['OHLCV_EXPORT', 'LLM_REPORT'],
      logger: a.log.logger,
    });
    await expect(attempt).rejects.toBeInstanceOf(WorkerConfigError);
    await expect(attempt).rejects.toThrow(/LLM_REPORT/);
  });
});

describe('WorkerModule — on the in-memory broker', () => {
  it('executes a published step-ready message, publishes the step event, acks duplicates and poison', async () => {
    const a = adapters();
    const handler = new TestStepHandler('OHLCV_EXPORT');
    const run = makeFlowRun();
    await a.store.inner.create(run);
    const events: StepEventMessage[] = [];
    const sub = await a.broker.subscribe(
      STEP_EVENTS_SUBSCRIPTION,
      (message) => {
        events.push(JSON.parse(message.data.toString('utf8')) as StepEventMessage);
        message.ack();
      },
      { maxInFlight: 10 },
    );
    cleanups.push(() => sub.close());
    await boot(moduleOptions(a, { handlers: [handler] }));

    const publisher = new BrokerPublisher({ publisher: a.broker });
    const ready = {
      runId: run.runId,
      stepId: OHLCV,
      stepType: 'OHLCV_EXPORT' as const,
      attempt: 0,
      dispatchedAt: new Date().toISOString(),
    };
    await publisher.publishStepReady(ready);
    await expectEventually(() => {
      expect(events).toEqual([
        expect.objectContaining({ stepId: OHLCV, status: 'SUCCEEDED', attempt: 1 }),
      ]);
    });
    const acked = a.log.withEvent('message_acked');
    expect(acked[0]).toMatchObject({ outcome: 'processed', detail: 'executed:SUCCEEDED' });

    await publisher.publishStepReady(ready);
    await publisher.publishJson(
      stepReadyTopic('OHLCV_EXPORT'),
      { hello: 'world' },
      { messageType: 'step_ready' },
    );
    await expectEventually(() => {
      expect(a.log.withEvent('message_acked')).toHaveLength(2);
      expect(a.log.withEvent('message_invalid')).toHaveLength(1);
    });
    expect(a.log.withEvent('message_acked')[1]).toMatchObject({
      outcome: 'noop',
      reason: 'not_ready',
    });
    expect(handler.executions).toBe(1);
    expect(events).toHaveLength(1);
  });

  it('nacks a transient store failure; the redelivery executes', async () => {
    const a = adapters();
    const handler = new TestStepHandler('OHLCV_EXPORT');
    const run = makeFlowRun();
    await a.store.inner.create(run);
    a.store.failNextGets(1);
    await boot(moduleOptions(a, { handlers: [handler] }));
    await new BrokerPublisher({ publisher: a.broker }).publishStepReady({
      runId: run.runId,
      stepId: OHLCV,
      stepType: 'OHLCV_EXPORT',
      attempt: 0,
      dispatchedAt: new Date().toISOString(),
    });
    await expectEventually(
      async () => {
        expect((await a.store.inner.get(run.runId))?.run.steps[OHLCV]?.status).toBe('SUCCEEDED');
      },
      { timeoutMs: 5_000 },
    );
    expect(a.log.withEvent('message_handler_failed')).toHaveLength(1);
    expect(handler.executions).toBe(1);
  });

  it('close() aborts a step still running after the drain window; nothing is finalized', async () => {
    const a = adapters();
    const handler = new TestStepHandler('OHLCV_EXPORT');
    handler.executeImpl = (ctx) => untilAborted(ctx.signal);
    const run = makeFlowRun();
    await a.store.inner.create(run);
    const app = await boot(moduleOptions(a, { handlers: [handler] }), 50);
    await new BrokerPublisher({ publisher: a.broker }).publishStepReady({
      runId: run.runId,
      stepId: OHLCV,
      stepType: 'OHLCV_EXPORT',
      attempt: 0,
      dispatchedAt: new Date().toISOString(),
    });
    await expectEventually(() => {
      expect(handler.executions).toBe(1);
    });
    await app.close();
    expect(handler.signals[0]?.reason).toEqual({ kind: 'shutdown' });
    expect(a.store.statusWrites(OHLCV)).toEqual(['RUNNING']);
  });
});

describe('startHealthServer', () => {
  it('answers GET /healthz with 200 or 503, anything else with 404', async () => {
    let healthy = true;
    const server = await startHealthServer({
      port: 0,
      host: '127.0.0.1',
      isHealthy: () => healthy,
    });
    cleanups.push(() => server.close());
    const url = `http://127.0.0.1:${server.port}`;
    const ok = await fetch(`${url}/healthz`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ status: 'ok' });
    healthy = false;
    expect((await fetch(`${url}/healthz`)).status).toBe(503);
    expect((await fetch(`${url}/other`)).status).toBe(404);
  });
});
