import {
  createLlmClientFromConfig,
  createLlmWorkerRuntime,
  OfflineRecommenderClient,
  type LlmClient,
  type LlmWorkerRuntime,
} from '@tda/llm';
import type { LlmRecommendationConfig } from './config';

export { createPromptRegistry, seedDefaultRegistry } from '@tda/llm';

/** The Gemini client when credentials are configured, else the deterministic offline recommender. */
export function createLlmClient(config: LlmRecommendationConfig): LlmClient {
  return createLlmClientFromConfig(config) ?? new OfflineRecommenderClient();
}

export type LlmRecommendationRuntime = LlmWorkerRuntime;

/** Client + prompt registry with the defaults seeded (libs/llm createLlmWorkerRuntime). */
export function createLlmRecommendationRuntime(
  config: LlmRecommendationConfig,
): Promise<LlmRecommendationRuntime> {
  return createLlmWorkerRuntime(config, () => new OfflineRecommenderClient());
}
