import type { Timeframe } from '@tda/contracts';
import type { CandleSeries, IncompleteBucketPolicy } from './candle';

export interface FetchCandlesRequest {
  /** As the user wrote it: BTC-USDT, BTC/USDT, BTCUSDT, BTC-USD (case-insensitive). */
  symbol: string;
  timeframe: Timeframe;
  /** The newest `limit` candles (after the incomplete-bucket policy). Default: all available. */
  limit?: number;
  /** Only source data with openTime >= from (epoch ms); a bucket cut by `from` is dropped. */
  from?: number;
  /** Only source data with openTime < to (epoch ms); a bucket cut by `to` is incomplete. */
  to?: number;
  /** Default 'dropped'. */
  incompleteBucketPolicy?: IncompleteBucketPolicy;
  signal?: AbortSignal;
}

/**
 * Where OHLCV candles come from (DESIGN.md §7): the bundled real datasets by default, a live
 * exchange through ccxt when configured. Every method rejects with a MarketDataError:
 * UnknownSymbolError / UnsupportedTimeframeError / InvalidCandleRequestError
 * (INVALID_STEP_INPUTS, naming what is available) or MarketDataUnavailableError
 * (MARKET_DATA_UNAVAILABLE, retryable when transient).
 *
 * Buckets follow exchange UTC boundaries (see timeframes.ts); candles are ascending, one per
 * bucket; only the last may carry `complete: false` (policy 'marked').
 */
export interface CandleSource {
  readonly provider: 'bundled' | 'ccxt';
  /** Canonical symbols this source serves, sorted. */
  listSymbols(): Promise<string[]>;
  /** Timeframes available for `symbol` (1h, 4h, 1d, 1w, 1M order); UnknownSymbolError if none. */
  availableTimeframes(symbol: string): Promise<Timeframe[]>;
  fetchCandles(request: FetchCandlesRequest): Promise<CandleSeries>;
}
