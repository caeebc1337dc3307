import { OHLCV_EXPORT_STEP } from '@tda/step-types';
import { defineWorker } from '@tda/worker-kit';
import { ohlcvExportConfigSchema } from './config';
import { createOhlcvExportHandler, type OhlcvExportOverrides } from './ohlcv-export.factory';

/** The OHLCV worker: the handler over TDA_MARKET_DATA (bundled datasets or a live exchange). */
export const ohlcvExportWorker = defineWorker({
  descriptor: OHLCV_EXPORT_STEP,
  configSchema: ohlcvExportConfigSchema,
  async create(config, { overrides }: { overrides: OhlcvExportOverrides | undefined }) {
    return {
      handler: await createOhlcvExportHandler(config, overrides),
      startedFields: {
        marketData:
          config.TDA_MARKET_DATA === 'ccxt' ? `ccxt:${config.TDA_CCXT_EXCHANGE}` : 'bundled',
        incompleteBucketPolicy: config.TDA_OHLCV_INCOMPLETE_BUCKETS,
      },
    };
  },
});
