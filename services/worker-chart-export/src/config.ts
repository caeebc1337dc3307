import { DEFAULT_MAX_CHART_IMAGE_BYTES } from '@tda/charts';
import { refineGoogleBackend } from '@tda/config';
import { refineWorkerIngress, workerServiceEnv } from '@tda/worker-kit';
import { z } from 'zod';

/**
 * The chart worker's environment, validated at boot (DESIGN.md §7). Numbers come from env
 * strings, hence `coerce`.
 */
export const chartExportConfigSchema = z
  .object({
    /** Backend env, PORT, TDA_LOG_LEVEL, TDA_STEP_* and the ingress (TDA_INGRESS, TDA_PUSH_*), shared by every worker. */
    ...workerServiceEnv,
    /**
     * Per-image PNG limit (default: seed 002 maxChartImageBytes, 256 KB). Over it the renderer retries smaller and finally lists the chart under
     * failures[]. Raising it above the LLM step's limit only moves the rejection downstream.
     */
    TDA_MAX_CHART_IMAGE_BYTES: z.coerce
      .number()
      .int()
      .min(16 * 1024)
      .max(8 * 1024 * 1024)
      .default(DEFAULT_MAX_CHART_IMAGE_BYTES),
  })
  .superRefine(refineGoogleBackend)
  .superRefine(refineWorkerIngress);

export type ChartExportConfig = z.infer<typeof chartExportConfigSchema>;
