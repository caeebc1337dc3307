import 'reflect-metadata';
import { createBackends } from '@tda/backends';
import { ConfigError, loadConfig, type EnvSource } from '@tda/config';
import { OfflineAnalystClient } from '@tda/llm';
import { createMemoryLogger } from '@tda/observability';
import { bootstrapWorker, StepHarnessRegistry } from '@tda/worker-kit';
import { deliverStep, memoryWorkerEnv } from '@tda/worker-kit/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { LlmReportConfig } from './config';
import { createLlmClient, createPromptRegistry, seedDefaultRegistry } from './llm-report.factory';
import { LlmReportHandler } from './llm-report.handler';
import { llmReportWorker } from './llm-report.worker';
import { flowFixture, parseReport, REPORT_1W, snapshot } from './testing/llm-report.fixtures';

function loadLlmReportConfig(env: EnvSource): LlmReportConfig {
  return loadConfig(llmReportWorker.descriptor.service, llmReportWorker.configSchema, env);
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('llm-report factory', () => {
  it('uses the offline analyst without credentials and Gemini with a key', () => {
    expect(createLlmClient(loadLlmReportConfig({}))).toBeInstanceOf(OfflineAnalystClient);
    expect(createLlmClient(loadLlmReportConfig({ GEMINI_API_KEY: 'k-1' })).provider).toBe('gemini');
  });

  it('holds the default prompts and schema in memory mode; seeding them again changes nothing', async () => {
    const config = loadLlmReportConfig({});
    const registry = createPromptRegistry(config);
    expect(await registry.getPrompt('prompt_week_v1')).not.toBeNull();
    expect(await registry.getSchema('llm_report_output_v1')).not.toBeNull();
    const plan = await seedDefaultRegistry(config, registry);
    expect(plan.length).toBeGreaterThan(0);
    expect(plan.every((entry) => entry.action === 'unchanged' && !entry.applied)).toBe(true);
  });

  it('needs a Firestore client outside memory mode', () => {
    expect(() => createPromptRegistry({ TDA_BACKEND: 'gcp' })).toThrow(/Firestore client/);
  });
});

describe('bootstrapWorker(llmReportWorker)', () => {
  it('boots in memory mode with the offline analyst and the step timeout', async () => {
    const memory = await memoryWorkerEnv({ TDA_LLM_STEP_TIMEOUT_SECONDS: '300' });
    cleanups.push(() => memory.cleanup());
    const log = createMemoryLogger();
    const handle = await bootstrapWorker(llmReportWorker, { env: memory.env, logger: log.logger });
    cleanups.push(() => handle.close());
    expect(handle.handler).toBeInstanceOf(LlmReportHandler);
    expect(handle.handler.runtime.client).toBeInstanceOf(OfflineAnalystClient);
    expect(handle.handler.runtime.provider).toBe('offline');
    expect(log.withEvent('service_started')[0]).toMatchObject({
      stepType: 'LLM_REPORT',
      llmProvider: 'offline',
      stepTimeoutSeconds: 300,
      finalizeBudgetSeconds: 120,
    });
  });

  it('runs its harness with the TDA_STEP_* env and the effective LLM step timeout', async () => {
    const memory = await memoryWorkerEnv({
      TDA_STEP_TIMEOUT_SECONDS: '200',
      TDA_STEP_LEASE_SECONDS: '4',
      TDA_STEP_HEARTBEAT_SECONDS: '1',
      TDA_STEP_MAX_ATTEMPTS: '2',
      TDA_STEP_RETRY_BASE_DELAY_MS: '100',
    });
    cleanups.push(() => memory.cleanup());
    const log = createMemoryLogger();
    const handle = await bootstrapWorker(llmReportWorker, { env: memory.env, logger: log.logger });
    cleanups.push(() => handle.close());
    const harness = handle.worker.app
      .get(StepHarnessRegistry, { strict: false })
      .harnessFor('LLM_REPORT');
    expect(harness?.policy).toMatchObject({
      timeoutMs: 200_000,
      leaseMs: 4_000,
      heartbeatMs: 1_000,
      maxAttempts: 2,
      handlerMaxTries: 3,
      handlerRetryBaseDelayMs: 100,
      handlerRetryMaxDelayMs: 400,
    });
    expect(log.withEvent('service_started')[0]).toMatchObject({
      stepTimeoutSeconds: 200,
      stepPolicy: { timeoutMs: 200_000, leaseMs: 4_000, heartbeatMs: 1_000, maxAttempts: 2 },
    });
  });

  it('refuses to boot on a policy that cannot work, before opening anything', async () => {
    const memory = await memoryWorkerEnv({ TDA_STEP_HEARTBEAT_SECONDS: '90' });
    cleanups.push(() => memory.cleanup());
    const log = createMemoryLogger();
    const backends = vi.fn(createBackends);
    await expect(
      bootstrapWorker(llmReportWorker, {
        env: memory.env,
        logger: log.logger,
        createBackends: backends,
      }),
    ).rejects.toThrow(
      /TDA_STEP_HEARTBEAT_SECONDS \/ TDA_STEP_LEASE_SECONDS: the heartbeat \(90 s\) must be shorter than the lease \(60 s\) of LLM_REPORT/,
    );
    expect(backends).not.toHaveBeenCalled();
    expect(log.withEvent('service_started')).toEqual([]);
  });

  it('boots with a Gemini key without printing it', async () => {
    const memory = await memoryWorkerEnv({ GEMINI_API_KEY: 'secret-key-abc123' });
    cleanups.push(() => memory.cleanup());
    const log = createMemoryLogger();
    const handle = await bootstrapWorker(llmReportWorker, { env: memory.env, logger: log.logger });
    cleanups.push(() => handle.close());
    expect(handle.handler.runtime.provider).toBe('gemini');
    expect(log.withEvent('service_started')[0]).toMatchObject({ llmProvider: 'gemini' });
    expect(JSON.stringify(log.records)).not.toContain('secret-key-abc123');
  });

  it('refuses to boot on a bad environment, naming the service and the variable', async () => {
    const boot = bootstrapWorker(llmReportWorker, {
      env: { TDA_LLM_STEP_TIMEOUT_SECONDS: 'never' },
    });
    await expect(boot).rejects.toThrow(/TDA_LLM_STEP_TIMEOUT_SECONDS/);
    await expect(boot).rejects.toBeInstanceOf(ConfigError);
    await expect(boot).rejects.toMatchObject({ service: 'worker-llm-report' });
  });

  it('executes a step-ready message on its own backends, with the runtime overrides applied', async () => {
    const memory = await memoryWorkerEnv();
    cleanups.push(() => memory.cleanup());
    const log = createMemoryLogger();
    const handle = await bootstrapWorker(llmReportWorker, {
      env: memory.env,
      logger: log.logger,
      overrides: { runtime: { requestDeadlineMs: 1_234, finalizeBudgetMs: 5_000 } },
    });
    cleanups.push(() => handle.close());
    const generate = vi.spyOn(handle.handler.runtime.client, 'generate');
    const fixture = await flowFixture(new Date());
    const { store, artifacts } = handle.backends;
    for (const [uri, data] of await snapshot(fixture.artifacts)) {
      await artifacts.put(uri, data, { contentType: 'application/octet-stream' });
    }
    await store.create(fixture.run);
    const step = await deliverStep(handle, {
      runId: fixture.run.runId,
      stepId: REPORT_1W,
      stepType: 'LLM_REPORT',
    });
    expect(step.status).toBe('SUCCEEDED');
    const report = parseReport(await artifacts.read(fixture.reportUri));
    expect(report.metadata).toMatchObject({ provider: 'offline', stepId: REPORT_1W });
    // overrides.runtime reached the runtime: the request deadline is the overridden 1.234 s
    expect(generate).toHaveBeenCalledTimes(1);
    expect(generate.mock.calls[0]?.[0]).toMatchObject({ attempt: 1, deadlineMs: 1_234 });
    expect(step.outputs.execution?.['llm']).toMatchObject({
      provider: 'offline',
      requests: 1,
      answered: 1,
      attempts: { total: 1 },
      repair: { attempted: false },
    });
  });
});
