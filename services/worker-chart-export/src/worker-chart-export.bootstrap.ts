import { createBackends, type Backends } from '@tda/backends';
import type { EnvSource } from '@tda/config';
import { createLogger, createMetrics, logEvent, type Logger } from '@tda/observability';
import {
  createWorkerMicroservice,
  startHealthServer,
  type HealthServer,
  type WorkerMicroservice,
} from '@tda/worker-kit';
import { createChartExportHandler } from './chart-export.factory';
import { CHART_EXPORT_SERVICE, loadChartExportConfig, type ChartExportConfig } from './config';
import {
  WorkerChartExportModule,
  type WorkerChartExportModuleOptions,
} from './worker-chart-export.module';

export interface CreateChartExportWorkerOptions extends WorkerChartExportModuleOptions {
  /** Pub/Sub topology prefix (TDA_PUBSUB_PREFIX). */
  prefix?: string;
  maxInFlight?: number;
  drainTimeoutMs?: number;
}

/**
 * The worker as a Nest microservice consuming `tda-step-ready-chart-export`, not yet listening
 * (call `app.listen()`). For launchers and tests that bring their own adapters.
 */
export function createChartExportWorker(
  options: CreateChartExportWorkerOptions,
): Promise<WorkerMicroservice> {
  const { prefix, maxInFlight, drainTimeoutMs, ...moduleOptions } = options;
  return createWorkerMicroservice(WorkerChartExportModule.forRoot(moduleOptions), {
    broker: options.broker,
    stepTypes: ['CHART_EXPORT'],
    logger: options.logger,
    ...(prefix === undefined ? {} : { prefix }),
    ...(maxInFlight === undefined ? {} : { maxInFlight }),
    ...(drainTimeoutMs === undefined ? {} : { drainTimeoutMs }),
  });
}

export interface ChartExportWorkerHandle {
  config: ChartExportConfig;
  logger: Logger;
  backends: Backends;
  worker: WorkerMicroservice;
  health: HealthServer;
  /** Drains the transport, aborts what still runs, closes the adapters and the health port. */
  close(): Promise<void>;
}

export interface BootstrapChartExportWorkerOptions {
  /** Environment to validate; default the process environment (read by @tda/config only). */
  env?: EnvSource;
  logger?: Logger;
}

/**
 * Standalone boot (main.ts): config → logger → handler (resolves the bundled font: a broken
 * package fails here) → backends for TDA_BACKEND → worker consuming step-ready messages →
 * /healthz on PORT.
 */
export async function bootstrapChartExportWorker(
  options: BootstrapChartExportWorkerOptions = {},
): Promise<ChartExportWorkerHandle> {
  const config = loadChartExportConfig(options.env);
  const logger =
    options.logger ??
    createLogger({
      service: CHART_EXPORT_SERVICE,
      level: config.TDA_LOG_LEVEL,
      projectId: config.GOOGLE_CLOUD_PROJECT,
    });
  const handler = createChartExportHandler({
    maxChartImageBytes: config.TDA_MAX_CHART_IMAGE_BYTES,
  });
  const metrics = createMetrics({ service: CHART_EXPORT_SERVICE });
  const backends = await createBackends(config);
  let worker: WorkerMicroservice;
  try {
    worker = await createChartExportWorker({
      handler,
      store: backends.store,
      broker: backends.broker,
      artifacts: backends.artifacts,
      logger,
      prefix: config.TDA_PUBSUB_PREFIX,
      metrics,
      policy: {
        artifactBucket: config.TDA_ARTIFACTS_BUCKET,
        artifactPrefix: config.TDA_ARTIFACTS_PREFIX,
        topicPrefix: config.TDA_PUBSUB_PREFIX,
      },
    });
    await worker.app.listen();
  } catch (error) {
    await backends.close();
    throw error;
  }
  const health = await startHealthServer({ port: config.PORT, metrics });
  logEvent(logger, 'info', 'service_started', {
    port: health.port,
    backend: backends.describe(),
    chartTemplates: handler.renderer.templates.ids(),
    maxChartImageBytes: handler.renderer.maxImageBytes,
  });
  return {
    config,
    logger,
    backends,
    worker,
    health,
    close: async () => {
      await worker.app.close();
      await backends.close();
      await health.close();
    },
  };
}
