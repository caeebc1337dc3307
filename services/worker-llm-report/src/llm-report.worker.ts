import { LlmStepRuntime, type LlmStepRuntimeOptions } from '@tda/llm';
import { LLM_REPORT_STEP } from '@tda/step-types';
import { defineWorker } from '@tda/worker-kit';
import { llmReportConfigSchema, llmReportHarnessPolicy } from './config';
import { createLlmReportRuntime } from './llm-report.factory';
import { LlmReportHandler } from './llm-report.handler';

/** Test hooks: the LLM step runtime's timings (the chaos suite makes a model call time out fast). */
export interface LlmReportOverrides {
  runtime?: Pick<
    LlmStepRuntimeOptions,
    'requestDeadlineMs' | 'finalizeBudgetMs' | 'policy' | 'sleep'
  >;
}

/**
 * The LLM_REPORT worker: the LLM client (Gemini, or the offline analyst without credentials) and
 * the prompt registry (defaults seeded create-only in memory/emulators mode), the seed 002 time
 * budget from its config, and its own step timeout as the harness deadline.
 */
export const llmReportWorker = defineWorker({
  descriptor: LLM_REPORT_STEP,
  configSchema: llmReportConfigSchema,
  policy: llmReportHarnessPolicy,
  async create(
    config,
    {
      logger,
      overrides,
    }: { logger: LlmStepRuntimeOptions['logger']; overrides: LlmReportOverrides | undefined },
  ) {
    const llm = await createLlmReportRuntime(config);
    const runtime = new LlmStepRuntime({
      registry: llm.registry,
      client: llm.client,
      ...(logger === undefined ? {} : { logger }),
      requestDeadlineMs: config.TDA_LLM_REQUEST_DEADLINE_SECONDS * 1_000,
      finalizeBudgetMs: config.TDA_LLM_FINALIZE_BUDGET_SECONDS * 1_000,
      ...overrides?.runtime,
    });
    return {
      handler: new LlmReportHandler(runtime),
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
