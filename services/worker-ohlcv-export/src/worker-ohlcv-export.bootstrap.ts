import type { EnvSource } from '@tda/config';
import type { Logger } from '@tda/observability';
import {
  bootstrapWorkerService,
  createStepWorker,
  type StepWorkerOptions,
  type WorkerMicroservice,
  type WorkerServiceHandle,
} from '@tda/worker-kit';
import { loadOhlcvExportConfig, OHLCV_EXPORT_SERVICE, type OhlcvExportConfig } from './config';
import { createOhlcvExportHandler, type OhlcvExportOverrides } from './ohlcv-export.factory';
import type { OhlcvExportHandler } from './ohlcv-export.handler';

export type CreateOhlcvExportWorkerOptions = StepWorkerOptions & { handler: OhlcvExportHandler };

/**
 * The worker with adapters given (the local launcher): worker-kit's createStepWorker, typed to
 * this service's handler. Not yet listening (call `app.listen()`).
 */
export function createOhlcvExportWorker(
  options: CreateOhlcvExportWorkerOptions,
): Promise<WorkerMicroservice> {
  return createStepWorker(options);
}

export type OhlcvExportWorkerHandle = WorkerServiceHandle<OhlcvExportConfig, OhlcvExportHandler>;

export interface BootstrapOhlcvExportWorkerOptions {
  /** Environment to validate; default the process environment (read by @tda/config only). */
  env?: EnvSource;
  /** Test hooks for the candle source (a recorded ccxt exchange, a clock). */
  overrides?: OhlcvExportOverrides;
  logger?: Logger;
}

/**
 * Standalone boot (main.ts): config → worker-kit's bootstrapWorkerService with the handler for
 * TDA_MARKET_DATA (bundled datasets or a live ccxt exchange).
 */
export async function bootstrapOhlcvExportWorker(
  options: BootstrapOhlcvExportWorkerOptions = {},
): Promise<OhlcvExportWorkerHandle> {
  const config = loadOhlcvExportConfig(options.env);
  return bootstrapWorkerService({
    service: OHLCV_EXPORT_SERVICE,
    config,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    createHandler: (c) => createOhlcvExportHandler(c, options.overrides),
    startedFields: (c) => ({
      marketData: c.TDA_MARKET_DATA === 'ccxt' ? `ccxt:${c.TDA_CCXT_EXCHANGE}` : 'bundled',
      incompleteBucketPolicy: c.TDA_OHLCV_INCOMPLETE_BUCKETS,
    }),
  });
}
