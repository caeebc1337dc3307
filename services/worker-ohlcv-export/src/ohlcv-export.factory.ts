import {
  BundledCandleSource,
  CcxtCandleSource,
  createCcxtExchange,
  type CandleSource,
  type CcxtExchangeLike,
} from '@tda/market-data';
import type { OhlcvExportConfig } from './config';
import { OhlcvExportHandler } from './ohlcv-export.handler';

export type OhlcvExportSettings = Pick<
  OhlcvExportConfig,
  'TDA_MARKET_DATA' | 'TDA_CCXT_EXCHANGE' | 'TDA_CCXT_TIMEOUT_MS' | 'TDA_OHLCV_INCOMPLETE_BUCKETS'
> &
  Partial<Pick<OhlcvExportConfig, 'TDA_MARKET_DATA_DIR'>>;

export interface OhlcvExportOverrides {
  /** A ready ccxt exchange (tests: a recorded one) instead of building one by id. */
  exchange?: CcxtExchangeLike;
  /** Clock deciding which live candle is still forming; default Date.now. */
  now?: () => number;
}

/** The candle source the config selects (TDA_MARKET_DATA). */
export async function createCandleSource(
  settings: OhlcvExportSettings,
  overrides: OhlcvExportOverrides = {},
): Promise<CandleSource> {
  if (settings.TDA_MARKET_DATA === 'bundled') {
    return new BundledCandleSource(
      settings.TDA_MARKET_DATA_DIR === undefined ? {} : { dataDir: settings.TDA_MARKET_DATA_DIR },
    );
  }
  const exchange =
    overrides.exchange ??
    (await createCcxtExchange(settings.TDA_CCXT_EXCHANGE, {
      timeoutMs: settings.TDA_CCXT_TIMEOUT_MS,
    }));
  return new CcxtCandleSource({
    exchange,
    ...(overrides.now === undefined ? {} : { now: overrides.now }),
  });
}

/** The OHLCV_EXPORT handler over the configured candle source and incomplete-bucket policy. */
export async function createOhlcvExportHandler(
  settings: OhlcvExportSettings,
  overrides: OhlcvExportOverrides = {},
): Promise<OhlcvExportHandler> {
  return new OhlcvExportHandler({
    candles: await createCandleSource(settings, overrides),
    incompleteBucketPolicy: settings.TDA_OHLCV_INCOMPLETE_BUCKETS,
  });
}
