import {
  bootstrapWorkerService,
  type WorkerBootOptions,
  type WorkerServiceHandle,
} from '@tda/worker-kit';
import { loadOhlcvExportConfig, OHLCV_EXPORT_SERVICE, type OhlcvExportConfig } from './config';
import { createOhlcvExportHandler, type OhlcvExportOverrides } from './ohlcv-export.factory';
import type { OhlcvExportHandler } from './ohlcv-export.handler';

export type OhlcvExportWorkerHandle = WorkerServiceHandle<OhlcvExportConfig, OhlcvExportHandler>;

export interface BootstrapOhlcvExportWorkerOptions extends WorkerBootOptions {
  /** Test hooks for the candle source (a recorded ccxt exchange, a clock). */
  overrides?: OhlcvExportOverrides;
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
    logger: options.logger,
    createHandler: (c) => createOhlcvExportHandler(c, options.overrides),
    startedFields: (c) => ({
      marketData: c.TDA_MARKET_DATA === 'ccxt' ? `ccxt:${c.TDA_CCXT_EXCHANGE}` : 'bundled',
      incompleteBucketPolicy: c.TDA_OHLCV_INCOMPLETE_BUCKETS,
    }),
  });
}
