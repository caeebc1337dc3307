import {
  createConfiguredCandleSource,
  type CandleSource,
  type MarketDataOverrides,
  type MarketDataSettings,
} from '@tda/market-data';
import type { OhlcvExportConfig } from './config';
import { OhlcvExportHandler } from './ohlcv-export.handler';

export type OhlcvExportSettings = MarketDataSettings &
  Pick<OhlcvExportConfig, 'TDA_OHLCV_INCOMPLETE_BUCKETS'>;

/** Test hooks: a ready ccxt exchange (a recorded one) and the clock of the live source. */
export type OhlcvExportOverrides = MarketDataOverrides;

/** The candle source the config selects (TDA_MARKET_DATA; libs/market-data). */
export function createCandleSource(
  settings: MarketDataSettings,
  overrides: OhlcvExportOverrides = {},
): Promise<CandleSource> {
  return createConfiguredCandleSource(settings, overrides);
}

/** The OHLCV_EXPORT handler over the configured candle source and incomplete-bucket policy. */
export async function createOhlcvExportHandler(
  settings: OhlcvExportSettings,
  overrides: OhlcvExportOverrides = {},
): Promise<OhlcvExportHandler> {
  return new OhlcvExportHandler({
    candles: await createConfiguredCandleSource(settings, overrides),
    incompleteBucketPolicy: settings.TDA_OHLCV_INCOMPLETE_BUCKETS,
  });
}
