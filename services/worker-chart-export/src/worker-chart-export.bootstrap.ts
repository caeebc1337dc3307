import type { EnvSource } from '@tda/config';
import type { Logger } from '@tda/observability';
import {
  bootstrapWorkerService,
  createStepWorker,
  type StepWorkerOptions,
  type WorkerMicroservice,
  type WorkerServiceHandle,
} from '@tda/worker-kit';
import { createChartExportHandler } from './chart-export.factory';
import type { ChartExportHandler } from './chart-export.handler';
import { CHART_EXPORT_SERVICE, loadChartExportConfig, type ChartExportConfig } from './config';

export type CreateChartExportWorkerOptions = StepWorkerOptions & { handler: ChartExportHandler };

/**
 * The worker with adapters given (the local launcher): worker-kit's createStepWorker, typed to
 * this service's handler. Not yet listening (call `app.listen()`).
 */
export function createChartExportWorker(
  options: CreateChartExportWorkerOptions,
): Promise<WorkerMicroservice> {
  return createStepWorker(options);
}

export type ChartExportWorkerHandle = WorkerServiceHandle<ChartExportConfig, ChartExportHandler>;

export interface BootstrapChartExportWorkerOptions {
  /** Environment to validate; default the process environment (read by @tda/config only). */
  env?: EnvSource;
  logger?: Logger;
}

/**
 * Standalone boot (main.ts): config → worker-kit's bootstrapWorkerService with the chart handler
 * (building it resolves the bundled font, so a broken package fails before any backend opens).
 */
export async function bootstrapChartExportWorker(
  options: BootstrapChartExportWorkerOptions = {},
): Promise<ChartExportWorkerHandle> {
  const config = loadChartExportConfig(options.env);
  return bootstrapWorkerService({
    service: CHART_EXPORT_SERVICE,
    config,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    createHandler: (c) =>
      createChartExportHandler({ maxChartImageBytes: c.TDA_MAX_CHART_IMAGE_BYTES }),
    startedFields: (_c, handler) => ({
      chartTemplates: handler.renderer.templates.ids(),
      maxChartImageBytes: handler.renderer.maxImageBytes,
    }),
  });
}
