import { CHART_EXPORT_STEP } from '@tda/step-types';
import { defineWorker } from '@tda/worker-kit';
import { chartExportConfigSchema } from './config';
import { createChartExportHandler } from './chart-export.factory';

/**
 * The chart worker: building the handler resolves the bundled font, so a broken package fails
 * at boot, before any backend opens.
 */
export const chartExportWorker = defineWorker({
  descriptor: CHART_EXPORT_STEP,
  configSchema: chartExportConfigSchema,
  create(config) {
    const handler = createChartExportHandler({
      maxChartImageBytes: config.TDA_MAX_CHART_IMAGE_BYTES,
    });
    return {
      handler,
      startedFields: {
        chartTemplates: handler.renderer.templates.ids(),
        maxChartImageBytes: handler.renderer.maxImageBytes,
      },
    };
  },
});
