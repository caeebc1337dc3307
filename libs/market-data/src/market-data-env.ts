import { z } from 'zod';
import { BundledCandleSource } from './bundled/bundled-candle.source';
import type { CandleSource } from './candle-source.port';
import { CcxtCandleSource, type CcxtExchangeLike } from './ccxt/ccxt-candle.source';
import { createCcxtExchange } from './ccxt/ccxt-exchange.factory';

/**
 * The market data fields of a worker's env schema (spread into its z.object, DESIGN.md §7): the
 * same variables for every worker that reads candles (OHLCV_EXPORT, ACCOUNT_EXPORT's marks).
 * Numbers come from env strings, hence `coerce`.
 */
export const marketDataEnv = {
  /** Where candles come from: the bundled real datasets (offline) or a live exchange. */
  TDA_MARKET_DATA: z.enum(['bundled', 'ccxt']).default('bundled'),
  /** ccxt exchange id when TDA_MARKET_DATA=ccxt (public endpoints only, no API keys). */
  TDA_CCXT_EXCHANGE: z
    .string()
    .regex(/^[a-z0-9]{2,30}$/, 'must be a ccxt exchange id such as binance')
    .default('binance'),
  /** Per-request timeout of the exchange client. */
  TDA_CCXT_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(120_000).default(10_000),
  /** Directory of the bundled CSV files; default: libs/market-data/data next to the sources. */
  TDA_MARKET_DATA_DIR: z.string().min(1).optional(),
} as const;

export interface MarketDataSettings {
  TDA_MARKET_DATA: 'bundled' | 'ccxt';
  TDA_CCXT_EXCHANGE: string;
  TDA_CCXT_TIMEOUT_MS: number;
  TDA_MARKET_DATA_DIR?: string | undefined;
}

export interface MarketDataOverrides {
  /** A ready ccxt exchange (tests: a recorded one) instead of building one by id. */
  exchange?: CcxtExchangeLike;
  /** Clock deciding which live candle is still forming; default Date.now. */
  now?: () => number;
}

/** The candle source the settings select (TDA_MARKET_DATA). */
export async function createConfiguredCandleSource(
  settings: MarketDataSettings,
  overrides: MarketDataOverrides = {},
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
