import 'reflect-metadata';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createBackends, type Backends } from '@tda/backends';
import { ConfigError, type EnvSource } from '@tda/config';
import { makeFlowRun } from '@tda/flow-store/testing';
import { BrokerPublisher } from '@tda/messaging';
import { createMemoryLogger } from '@tda/observability';
import { expectEventually } from '@tda/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HarnessConfigError } from './harness-policy';
import { StepHarnessRegistry } from './step-harness.registry';
import { memoryWorkerEnv, TestStepHandler, testStepType } from './testing';
import { defineWorker, type WorkerDefinition, type WorkerRuntime } from './worker-definition';
import { workerServiceEnv, type WorkerServiceConfig } from './worker-env';
import { bootstrapWorker, type BootstrapWorkerOptions } from './worker-service';

const STEP = testStepType('OHLCV_EXPORT');
const schema = z.object({ ...workerServiceEnv, TDA_GREETING: z.string().default('hello') });
type TestConfig = z.infer<typeof schema>;

/** A worker definition around TestStepHandler (its create and policy replaceable per test). */
function testWorker(
  parts: {
    create?: (
      config: TestConfig,
    ) => WorkerRuntime<TestStepHandler> | Promise<WorkerRuntime<TestStepHandler>>;
    configSchema?: z.ZodType<TestConfig, unknown>;
    policy?: WorkerDefinition<TestConfig, TestStepHandler>['policy'];
  } = {},
): WorkerDefinition<TestConfig, TestStepHandler> {
  return defineWorker({
    descriptor: STEP,
    configSchema: parts.configSchema ?? schema,
    create:
      parts.create ??
      ((config) => ({
        handler: new TestStepHandler(STEP),
        startedFields: { greeting: config.TDA_GREETING, handlerType: STEP.stepType },
      })),
    ...(parts.policy === undefined ? {} : { policy: parts.policy }),
  });
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function envFor(env: EnvSource = {}): Promise<EnvSource> {
  const memory = await memoryWorkerEnv();
  cleanups.push(() => memory.cleanup());
  return { ...memory.env, ...env };
}

/** createBackends that counts how often the backends it built were created and closed. */
function countingBackends() {
  const counts = { created: 0, closed: 0 };
  const factory = async (config: WorkerServiceConfig): Promise<Backends> => {
    const backends = await createBackends(config);
    counts.created += 1;
    return {
      ...backends,
      close: async () => {
        counts.closed += 1;
        await backends.close();
      },
    };
  };
  return { counts, factory };
}

function options(
  env: EnvSource,
  overrides: Partial<BootstrapWorkerOptions> = {},
): BootstrapWorkerOptions & { log: ReturnType<typeof createMemoryLogger> } {
  const log = createMemoryLogger();
  return { env, logger: log.logger, drainTimeoutMs: 500, log, ...overrides };
}

describe('bootstrapWorker', () => {
  it('boots in memory mode: consumes its step type with the config names, serves /healthz and /metrics, logs service_started', async () => {
    const env = await envFor({
      TDA_ARTIFACTS_BUCKET: 'bucket-y',
      TDA_PUBSUB_PREFIX: 'tdy',
      TDA_GREETING: 'hi',
    });
    const { counts, factory } = countingBackends();
    const o = options(env, { createBackends: factory });
    const handle = await bootstrapWorker(testWorker(), o);
    cleanups.push(() => handle.close());

    const base = `http://127.0.0.1:${handle.health.port}`;
    expect(handle.health.port).toBeGreaterThan(0);
    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const started = o.log.withEvent('service_started');
    expect(started).toHaveLength(1);
    expect(started[0]).toMatchObject({
      port: handle.health.port,
      stepType: 'OHLCV_EXPORT',
      greeting: 'hi',
      handlerType: 'OHLCV_EXPORT',
    });
    expect(started[0]?.['backend']).toEqual(
      expect.arrayContaining([expect.stringMatching(/^backend: memory/)]),
    );

    // One step through the backends it built: prefix and artifact bucket come from the config.
    const run = makeFlowRun();
    await handle.backends.store.create(run);
    await new BrokerPublisher({
      publisher: handle.backends.broker,
      prefix: 'tdy',
    }).publishStepReady({
      runId: run.runId,
      stepId: 'ohlcv_export:1d',
      stepType: 'OHLCV_EXPORT',
      attempt: 0,
      dispatchedAt: new Date().toISOString(),
    });
    await expectEventually(
      async () => {
        const step = (await handle.backends.store.get(run.runId))?.run.steps['ohlcv_export:1d'];
        expect(step?.status).toBe('SUCCEEDED');
      },
      { timeoutMs: 10_000 },
    );
    const uri = `gs://bucket-y/runs/${run.runId}/1d/ohlcv_export:1d.json`;
    expect(await handle.backends.artifacts.exists(uri)).toBe(true);
    expect(handle.handler.executions).toBe(1);

    // The service's metrics saw the claim.
    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(
      /tda_step_claims_total\{service="worker-test-ohlcv-export",step_type="OHLCV_EXPORT",result="claimed"\} 1/,
    );

    const closing = handle.close();
    expect(handle.close()).toBe(closing);
    await closing;
    expect(counts).toEqual({ created: 1, closed: 1 });
    expect(o.log.withEvent('transport_stopped')).toHaveLength(1);
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  });

  it('builds the handler before opening any backend: a failing createHandler opens nothing', async () => {
    const { counts, factory } = countingBackends();
    const o = options(await envFor(), { createBackends: factory });
    const failing = testWorker({ create: () => Promise.reject(new Error('font missing')) });
    await expect(bootstrapWorker(failing, o)).rejects.toThrow('font missing');
    expect(counts).toEqual({ created: 0, closed: 0 });
    expect(o.log.withEvent('service_started')).toHaveLength(0);
  });

  it('refuses a step policy that cannot work (env + service policy) before opening the backends', async () => {
    const { counts, factory } = countingBackends();
    const o = options(await envFor({ TDA_STEP_LEASE_SECONDS: '1' }), { createBackends: factory });
    const boot = bootstrapWorker(testWorker({ policy: () => ({ heartbeatMs: 5_000 }) }), o);
    await expect(boot).rejects.toBeInstanceOf(ConfigError);
    await expect(boot).rejects.toThrow(/heartbeat \(5 s\) must be shorter than the lease \(1 s\)/);
    expect(counts).toEqual({ created: 0, closed: 0 });
  });

  it('applies the TDA_STEP_* env to the harness and logs the effective step policy', async () => {
    const o = options(await envFor({ TDA_STEP_TIMEOUT_SECONDS: '30', TDA_STEP_RETRY_TRIES: '1' }));
    const handle = await bootstrapWorker(testWorker({ policy: () => ({ maxAttempts: 7 }) }), o);
    cleanups.push(() => handle.close());
    const harness = handle.worker.app
      .get(StepHarnessRegistry, { strict: false })
      .harnessFor('OHLCV_EXPORT');
    expect(harness?.policy).toMatchObject({
      timeoutMs: 30_000,
      handlerMaxTries: 1,
      maxAttempts: 7,
    });
    expect(o.log.withEvent('service_started')[0]).toMatchObject({
      stepPolicy: { timeoutMs: 30_000, leaseMs: 60_000, retryTries: 1, maxAttempts: 7 },
    });
  });

  it('closes the backends when the microservice refuses to start', async () => {
    const { counts, factory } = countingBackends();
    // A schema that lets a bad prefix through: the harness refuses it at module init.
    const loose = schema.transform((config) => ({ ...config, TDA_ARTIFACTS_PREFIX: '/runs/' }));
    const o = options(await envFor(), { createBackends: factory });
    await expect(bootstrapWorker(testWorker({ configSchema: loose }), o)).rejects.toBeInstanceOf(
      HarnessConfigError,
    );
    expect(counts).toEqual({ created: 1, closed: 1 });
    expect(o.log.withEvent('service_started')).toHaveLength(0);
  });

  it('closes the listening worker and the backends when the health port is taken', async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '0.0.0.0', resolve));
    cleanups.push(() => new Promise<void>((resolve) => taken.close(() => resolve())));
    const { port } = taken.address() as AddressInfo;
    const { counts, factory } = countingBackends();
    const o = options(await envFor({ PORT: String(port) }), { createBackends: factory });
    await expect(bootstrapWorker(testWorker(), o)).rejects.toThrow(/EADDRINUSE/);
    expect(counts).toEqual({ created: 1, closed: 1 });
    expect(o.log.withEvent('transport_started')).toHaveLength(1);
    expect(o.log.withEvent('transport_stopped')).toHaveLength(1);
    expect(o.log.withEvent('service_started')).toHaveLength(0);
  });
});
