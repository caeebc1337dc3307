import { LlmStepRuntime, type LlmStepRuntimeOptions } from '@tda/llm';
import { LLM_RECOMMENDATION_STEP } from '@tda/step-types';
import { defineWorker } from '@tda/worker-kit';
import { llmRecommendationConfigSchema, llmRecommendationHarnessPolicy } from './config';
import { createLlmRecommendationRuntime } from './llm-recommendation.factory';
import { LlmRecommendationHandler } from './llm-recommendation.handler';

/** Test hooks: the LLM step runtime's timings (a scenario makes the backoff instant). */
export interface LlmRecommendationOverrides {
  runtime?: Pick<
    LlmStepRuntimeOptions,
    'requestDeadlineMs' | 'finalizeBudgetMs' | 'policy' | 'sleep'
  >;
}

/**
 * The LLM_RECOMMENDATION worker: the LLM client (Gemini, or the offline recommender without
 * credentials) and the prompt registry (defaults seeded create-only in memory/emulators mode), a
 * runtime that expects LLM_RECOMMENDATION_OUTPUT schemas, the seed 002 time budget from its
 * config, and its own step timeout as the harness deadline.
 */
export const llmRecommendationWorker = defineWorker({
  descriptor: LLM_RECOMMENDATION_STEP,
  configSchema: llmRecommendationConfigSchema,
  policy: llmRecommendationHarnessPolicy,
  async create(
    config,
    {
      logger,
      overrides,
    }: {
      logger: LlmStepRuntimeOptions['logger'];
      overrides: LlmRecommendationOverrides | undefined;
    },
  ) {
    const llm = await createLlmRecommendationRuntime(config);
    const runtime = new LlmStepRuntime({
      registry: llm.registry,
      client: llm.client,
      outputKind: 'LLM_RECOMMENDATION_OUTPUT',
      ...(logger === undefined ? {} : { logger }),
      requestDeadlineMs: config.TDA_LLM_REQUEST_DEADLINE_SECONDS * 1_000,
      finalizeBudgetMs: config.TDA_LLM_FINALIZE_BUDGET_SECONDS * 1_000,
      ...overrides?.runtime,
    });
    return {
      handler: new LlmRecommendationHandler(runtime),
      // No secrets: the provider name, never the key.
      startedFields: {
        llmProvider: llm.client.provider,
        stepTimeoutSeconds: config.TDA_LLM_STEP_TIMEOUT_SECONDS,
        requestDeadlineSeconds: config.TDA_LLM_REQUEST_DEADLINE_SECONDS,
        finalizeBudgetSeconds: config.TDA_LLM_FINALIZE_BUDGET_SECONDS,
        registrySeeded: llm.seeded.filter((e) => e.applied).map((e) => e.id),
      },
      close: llm.close,
    };
  },
});
