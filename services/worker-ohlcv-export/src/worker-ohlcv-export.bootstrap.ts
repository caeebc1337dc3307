import { createBackends, type Backends } from '@tda/backends';
import type { EnvSource } from '@tda/config';
import { createLogger, createMetrics, logEvent, type Logger } from '@tda/observability';
import {
  createWorkerMicroservice,
  startHealthServer,
  type HealthServer,
  type WorkerMicroservice,
} from '@tda/worker-kit';
import { loadOhlcvExportConfig, OHLCV_EXPORT_SERVICE, type OhlcvExportConfig } from './config';
import { createOhlcvExportHandler, type OhlcvExportOverrides } from './ohlcv-export.factory';
import {
  WorkerOhlcvExportModule,
  type WorkerOhlcvExportModuleOptions,
} from './worker-ohlcv-export.module';

export interface CreateOhlcvExportWorkerOptions extends WorkerOhlcvExportModuleOptions {
  /** Pub/Sub topology prefix (TDA_PUBSUB_PREFIX). */
  prefix?: string;
  maxInFlight?: number;
  drainTimeoutMs?: number;
}

/**
 * The worker as a Nest microservice consuming `tda-step-ready-ohlcv-export`, not yet listening
 * (call `app.listen()`). For launchers and tests that bring their own adapters.
 */
export function createOhlcvExportWorker(
  options: CreateOhlcvExportWorkerOptions,
): Promise<WorkerMicroservice> {
  const { prefix, maxInFlight, drainTimeoutMs, ...moduleOptions } = options;
  return createWorkerMicroservice(WorkerOhlcvExportModule.forRoot(moduleOptions), {
    broker: options.broker,
    stepTypes: ['OHLCV_EXPORT'],
    logger: options.logger,
    ...(prefix === undefined ? {} : { prefix }),
    ...(maxInFlight === undefined ? {} : { maxInFlight }),
    ...(drainTimeoutMs === undefined ? {} : { drainTimeoutMs }),
  });
}

export interface OhlcvExportWorkerHandle {
  config: OhlcvExportConfig;
  logger: Logger;
  backends: Backends;
  worker: WorkerMicroservice;
  health: HealthServer;
  /** Drains the transport, aborts what still runs, closes the adapters and the health port. */
  close(): Promise<void>;
}

export interface BootstrapOhlcvExportWorkerOptions {
  /** Environment to validate; default the process environment (read by @tda/config only). */
  env?: EnvSource;
  /** Test hooks for the candle source (a recorded ccxt exchange, a clock). */
  overrides?: OhlcvExportOverrides;
  logger?: Logger;
}

/**
 * Standalone boot (main.ts): config → logger → backends for TDA_BACKEND → handler for
 * TDA_MARKET_DATA → worker consuming step-ready messages → /healthz on PORT.
 */
export async function bootstrapOhlcvExportWorker(
  options: BootstrapOhlcvExportWorkerOptions = {},
): Promise<OhlcvExportWorkerHandle> {
  const config = loadOhlcvExportConfig(options.env);
  const logger =
    options.logger ??
    createLogger({
      service: OHLCV_EXPORT_SERVICE,
      level: config.TDA_LOG_LEVEL,
      projectId: config.GOOGLE_CLOUD_PROJECT,
    });
  const handler = await createOhlcvExportHandler(config, options.overrides);
  const metrics = createMetrics({ service: OHLCV_EXPORT_SERVICE });
  const backends = await createBackends(config);
  let worker: WorkerMicroservice;
  try {
    worker = await createOhlcvExportWorker({
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
    marketData: config.TDA_MARKET_DATA === 'ccxt' ? `ccxt:${config.TDA_CCXT_EXCHANGE}` : 'bundled',
    incompleteBucketPolicy: config.TDA_OHLCV_INCOMPLETE_BUCKETS,
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
