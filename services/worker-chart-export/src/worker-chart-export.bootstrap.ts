import {
  bootstrapWorkerService,
  type WorkerBootOptions,
  type WorkerServiceHandle,
} from '@tda/worker-kit';
import { createChartExportHandler } from './chart-export.factory';
import type { ChartExportHandler } from './chart-export.handler';
import { CHART_EXPORT_SERVICE, loadChartExportConfig, type ChartExportConfig } from './config';

export type ChartExportWorkerHandle = WorkerServiceHandle<ChartExportConfig, ChartExportHandler>;

/**
 * Standalone boot (main.ts): config → worker-kit's bootstrapWorkerService with the chart handler
 * (building it resolves the bundled font, so a broken package fails before any backend opens).
 */
export async function bootstrapChartExportWorker(
  options: WorkerBootOptions = {},
): Promise<ChartExportWorkerHandle> {
  const config = loadChartExportConfig(options.env);
  return bootstrapWorkerService({
    service: CHART_EXPORT_SERVICE,
    config,
    logger: options.logger,
    createHandler: (c) =>
      createChartExportHandler({ maxChartImageBytes: c.TDA_MAX_CHART_IMAGE_BYTES }),
    startedFields: (_c, handler) => ({
      chartTemplates: handler.renderer.templates.ids(),
      maxChartImageBytes: handler.renderer.maxImageBytes,
    }),
  });
}
