import {
  createLlmClientFromConfig,
  createLlmWorkerRuntime,
  OfflineAnalystClient,
  type LlmClient,
  type LlmWorkerRuntime,
} from '@tda/llm';
import type { LlmReportConfig } from './config';

export { createPromptRegistry, seedDefaultRegistry } from '@tda/llm';

/** The Gemini client when credentials are configured, else the deterministic offline analyst. */
export function createLlmClient(config: LlmReportConfig): LlmClient {
  return createLlmClientFromConfig(config) ?? new OfflineAnalystClient();
}

export type LlmReportRuntime = LlmWorkerRuntime;

/** Client + prompt registry with the defaults seeded (libs/llm createLlmWorkerRuntime). */
export function createLlmReportRuntime(config: LlmReportConfig): Promise<LlmReportRuntime> {
  return createLlmWorkerRuntime(config, () => new OfflineAnalystClient());
}
