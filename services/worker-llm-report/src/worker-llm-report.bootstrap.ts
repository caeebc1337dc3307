import { createLogger } from '@tda/observability';
import {
  bootstrapWorkerService,
  type WorkerBootOptions,
  type WorkerServiceHandle,
} from '@tda/worker-kit';
import {
  LLM_REPORT_SERVICE,
  llmReportHarnessPolicy,
  loadLlmReportConfig,
  type LlmReportConfig,
} from './config';
import { createLlmReportHandler, createLlmReportRuntime } from './llm-report.factory';
import type { LlmReportHandler } from './llm-report.handler';

export type LlmReportWorkerHandle = WorkerServiceHandle<LlmReportConfig, LlmReportHandler>;

/**
 * Standalone boot (main.ts): config → LLM client (Gemini, or the offline analyst without
 * credentials) → prompt registry (defaults seeded create-only in memory/emulators mode) →
 * worker-kit's bootstrapWorkerService with the effective step timeout (config.ts) as the harness
 * deadline, consuming step-ready messages and serving POST /cloudevents.
 */
export async function bootstrapLlmReportWorker(
  options: WorkerBootOptions = {},
): Promise<LlmReportWorkerHandle> {
  const config = loadLlmReportConfig(options.env);
  const logger =
    options.logger ??
    createLogger({
      service: LLM_REPORT_SERVICE,
      level: config.TDA_LOG_LEVEL,
      projectId: config.GOOGLE_CLOUD_PROJECT,
    });
  const runtime = await createLlmReportRuntime(config);
  const { client, registry, seeded } = runtime;
  let handle: LlmReportWorkerHandle;
  try {
    handle = await bootstrapWorkerService({
      service: LLM_REPORT_SERVICE,
      config,
      logger,
      policy: llmReportHarnessPolicy(config),
      createHandler: (c) => createLlmReportHandler(c, { registry, client, logger }),
      // No secrets: the provider name, never the key.
      startedFields: (c) => ({
        llmProvider: client.provider,
        stepTimeoutSeconds: c.TDA_LLM_STEP_TIMEOUT_SECONDS,
        requestDeadlineSeconds: c.TDA_LLM_REQUEST_DEADLINE_SECONDS,
        finalizeBudgetSeconds: c.TDA_LLM_FINALIZE_BUDGET_SECONDS,
        registrySeeded: seeded.filter((e) => e.applied).map((e) => e.id),
      }),
    });
  } catch (error) {
    await runtime.close().catch(() => undefined);
    throw error;
  }
  const closeWorker = handle.close;
  let closing: Promise<void> | undefined;
  return {
    ...handle,
    close: () => {
      closing ??= closeWorker().finally(runtime.close);
      return closing;
    },
  };
}
