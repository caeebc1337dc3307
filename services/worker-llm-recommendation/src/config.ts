import { llmWorkerConfigSchema, llmWorkerHarnessPolicy, type LlmWorkerConfig } from '@tda/llm';
import { LLM_RECOMMENDATION_STEP } from '@tda/step-types';

/**
 * The LLM_RECOMMENDATION worker's environment, validated at boot: the shared LLM worker env of libs/llm
 * (worker env, LLM provider, seed 002 budgets) with this step type's policy timeout as default.
 */
export const llmRecommendationConfigSchema = llmWorkerConfigSchema(
  LLM_RECOMMENDATION_STEP.policy.timeoutMs,
);

export type LlmRecommendationConfig = LlmWorkerConfig;

/** The effective step timeout as the harness deadline (libs/llm llmWorkerHarnessPolicy). */
export const llmRecommendationHarnessPolicy = llmWorkerHarnessPolicy;
