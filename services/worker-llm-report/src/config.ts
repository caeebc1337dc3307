import { llmWorkerConfigSchema, llmWorkerHarnessPolicy, type LlmWorkerConfig } from '@tda/llm';
import { LLM_REPORT_STEP } from '@tda/step-types';

/**
 * The LLM_REPORT worker's environment, validated at boot: the shared LLM worker env of libs/llm
 * (worker env, LLM provider, seed 002 budgets) with this step type's policy timeout as default.
 */
export const llmReportConfigSchema = llmWorkerConfigSchema(LLM_REPORT_STEP.policy.timeoutMs);

export type LlmReportConfig = LlmWorkerConfig;

/** The effective step timeout as the harness deadline (libs/llm llmWorkerHarnessPolicy). */
export const llmReportHarnessPolicy = llmWorkerHarnessPolicy;
