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
  /**
   * The run's as-of moment (epoch ms, `scope.asOf`): only source data that ENDED at or before it
   * is used (a 1h row 10:00–11:00 is not used for asOf 10:30), `limit` counts back from it, and
   * the bucket containing asOf (when it ends after asOf) is the incomplete one: 'marked' keeps it
   * with `complete: false`, 'dropped' leaves it out. It must lie within `coverage()` (else
   * AsOfOutOfRangeError). Exclusive with `to`. Absent: the newest data (live: up to now).
   */
  asOf?: number;
  /** Default 'dropped'. */
  incompleteBucketPolicy?: IncompleteBucketPolicy;
  signal?: AbortSignal;
}

/**
 * What data a source has for one symbol and timeframe: data exists for [from, to). The run's
 * asOf is chosen and checked against it at trigger time (resolveAsOf).
 */
export interface DataCoverage {
  /** The canonical symbol (BTC-USDT for the bundled data, the market symbol BTC/USDT for ccxt). */
  symbol: string;
  timeframe: Timeframe;
  /** Epoch ms of the first source data; null when unknown (a live exchange). */
  from: number | null;
  /** Epoch ms: the end of the newest COMPLETE source row (bundled) or candle (live, at now). */
  to: number;
  /** Human-readable: 'bundled dataset binance/BTCUSDT_1d', 'exchange binance'. */
  source: string;
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
  /**
   * The data available for `symbol` in `timeframe` (no candles fetched); UnknownSymbolError /
   * UnsupportedTimeframeError as fetchCandles.
   */
  coverage(symbol: string, timeframe: Timeframe): Promise<DataCoverage>;
}
