import 'reflect-metadata';
import { ConfigError, loadConfig, type EnvSource } from '@tda/config';
import { recommendationIdFor } from '@tda/flow-engine';
import { OfflineRecommenderClient } from '@tda/llm';
import { createMemoryLogger } from '@tda/observability';
import { LLM_RECOMMENDATION_STEP } from '@tda/step-types';
import { bootstrapWorker, StepHarnessRegistry } from '@tda/worker-kit';
import { deliverStep, memoryWorkerEnv } from '@tda/worker-kit/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { llmRecommendationHarnessPolicy, type LlmRecommendationConfig } from './config';
import {
  createLlmClient,
  createPromptRegistry,
  seedDefaultRegistry,
} from './llm-recommendation.factory';
import { LlmRecommendationHandler } from './llm-recommendation.handler';
import { llmRecommendationWorker } from './llm-recommendation.worker';
import {
  parseRecommendation,
  RECO_STEP,
  recommendationFixture,
  snapshot,
} from './testing/llm-recommendation.fixtures';

function loadRecoConfig(env: EnvSource): LlmRecommendationConfig {
  return loadConfig(
    llmRecommendationWorker.descriptor.service,
    llmRecommendationWorker.configSchema,
    env,
  );
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('worker-llm-recommendation config and factory', () => {
  it('is the worker of LLM_RECOMMENDATION with the seed 002 timeout policy by default', () => {
    expect(llmRecommendationWorker.descriptor).toBe(LLM_RECOMMENDATION_STEP);
    const config = loadRecoConfig({});
    expect(config).toMatchObject({
      TDA_BACKEND: 'memory',
      TDA_LLM_STEP_TIMEOUT_SECONDS: 780,
      TDA_LLM_REQUEST_DEADLINE_SECONDS: 600,
      TDA_LLM_FINALIZE_BUDGET_SECONDS: 120,
    });
    expect(llmRecommendationHarnessPolicy(config)).toEqual({ timeoutMs: 780_000 });
    expect(() => loadRecoConfig({ TDA_LLM_FINALIZE_BUDGET_SECONDS: '900' })).toThrow(ConfigError);
  });

  it('uses the offline recommender without credentials and Gemini with a key', () => {
    expect(createLlmClient(loadRecoConfig({}))).toBeInstanceOf(OfflineRecommenderClient);
    expect(createLlmClient(loadRecoConfig({ GEMINI_API_KEY: 'k-1' })).provider).toBe('gemini');
  });

  it('holds the recommendation prompt and schema in memory mode', async () => {
    const config = loadRecoConfig({});
    const registry = createPromptRegistry(config);
    expect(await registry.getPrompt('prompt_reco_v1')).not.toBeNull();
    expect(await registry.getSchema('llm_recommendation_output_v1')).toMatchObject({
      kind: 'LLM_RECOMMENDATION_OUTPUT',
    });
    const plan = await seedDefaultRegistry(config, registry);
    expect(plan.every((entry) => entry.action === 'unchanged')).toBe(true);
  });
});

describe('bootstrapWorker(llmRecommendationWorker)', () => {
  it('boots with the offline recommender, its step timeout and no secret in the logs', async () => {
    const memory = await memoryWorkerEnv({ TDA_LLM_STEP_TIMEOUT_SECONDS: '300' });
    cleanups.push(() => memory.cleanup());
    const log = createMemoryLogger();
    const handle = await bootstrapWorker(llmRecommendationWorker, {
      env: memory.env,
      logger: log.logger,
    });
    cleanups.push(() => handle.close());
    expect(handle.handler).toBeInstanceOf(LlmRecommendationHandler);
    expect(handle.handler.runtime.client).toBeInstanceOf(OfflineRecommenderClient);
    const harness = handle.worker.app
      .get(StepHarnessRegistry, { strict: false })
      .harnessFor('LLM_RECOMMENDATION');
    expect(harness?.policy).toMatchObject({ timeoutMs: 300_000 });
    expect(log.withEvent('service_started')[0]).toMatchObject({
      stepType: 'LLM_RECOMMENDATION',
      llmProvider: 'offline',
      stepTimeoutSeconds: 300,
    });
  });

  it('executes a step-ready message on its own backends into a SUCCEEDED recommendation', async () => {
    const memory = await memoryWorkerEnv();
    cleanups.push(() => memory.cleanup());
    const handle = await bootstrapWorker(llmRecommendationWorker, {
      env: memory.env,
      logger: createMemoryLogger().logger,
      overrides: { runtime: { requestDeadlineMs: 1_234 } },
    });
    cleanups.push(() => handle.close());
    const generate = vi.spyOn(handle.handler.runtime.client, 'generate');
    const fixture = await recommendationFixture({ now: new Date() });
    const { store, artifacts } = handle.backends;
    for (const [uri, data] of await snapshot(fixture.artifacts)) {
      await artifacts.put(uri, data, { contentType: 'application/json' });
    }
    await store.create(fixture.run);
    const step = await deliverStep(handle, {
      runId: fixture.run.runId,
      stepId: RECO_STEP,
      stepType: 'LLM_RECOMMENDATION',
    });
    expect(step.status).toBe('SUCCEEDED');
    expect(step.outputs.recommendationId).toBe(recommendationIdFor(fixture.run.runId, RECO_STEP));
    const file = parseRecommendation(await artifacts.read(fixture.recoUri));
    expect(file.metadata).toMatchObject({ provider: 'offline', stepId: RECO_STEP });
    expect(generate.mock.calls[0]?.[0]).toMatchObject({ attempt: 1, deadlineMs: 1_234 });
  });
});
