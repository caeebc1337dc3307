import { TIMEFRAMES, type OhlcvSource, type Timeframe } from '@tda/contracts';
import type { Candle, CandleSeries } from '../candle';
import { assertValidRequest } from '../candle-request';
import type { CandleSource, FetchCandlesRequest } from '../candle-source.port';
import {
  InvalidCandleRequestError,
  MarketDataUnavailableError,
  UnknownSymbolError,
  UnsupportedTimeframeError,
} from '../market-data.errors';
import { applyIncompleteBucketPolicy, resample, ResampleInputError } from '../resample';
import { addBuckets } from '../timeframes';
import { compactSymbol } from '../symbols';
import { mapCcxtError } from './ccxt-errors';

/** The part of a ccxt market this source reads. */
export interface CcxtMarketLike {
  id?: string | undefined;
  symbol: string;
  base: string;
  quote: string;
  spot?: boolean | undefined;
  active?: boolean | undefined;
}

/**
 * The subset of a ccxt `Exchange` this source uses. A real `new ccxt.binance()` satisfies it;
 * tests inject a typed fake fed with recorded fetchOHLCV output.
 */
export interface CcxtExchangeLike {
  readonly id: string;
  readonly timeframes: Readonly<Record<string, number | string>> | undefined;
  loadMarkets(): Promise<Readonly<Record<string, CcxtMarketLike | undefined>>>;
  fetchOHLCV(
    symbol: string,
    timeframe?: string,
    since?: number,
    limit?: number,
  ): Promise<ReadonlyArray<ReadonlyArray<number | undefined>>>;
}

export interface CcxtCandleSourceOptions {
  exchange: CcxtExchangeLike;
  /** Current time (ms) that decides which candle is still forming; default Date.now. */
  now?: () => number;
  /** Candles asked for when the request has no limit. Default 500. */
  defaultLimit?: number;
  /** Most candles one fetchOHLCV call may ask for (Binance spot: 1000). */
  maxPerRequest?: number;
}

/** How many market names an UnknownSymbolError lists: a hint, not the exchange's catalogue. */
const MAX_SUGGESTIONS = 30;

/**
 * Live candles from an exchange through ccxt. The exchange's native klines are used as they are
 * (no resampling: every TDA timeframe is a native Binance interval with the same UTC boundaries,
 * weeks on Monday). The candle whose bucket has not ended at `now()` is the still-forming one and
 * follows the incomplete-bucket policy. ccxt errors are mapped by ccxt-errors.ts.
 */
export class CcxtCandleSource implements CandleSource {
  readonly provider = 'ccxt' as const;
  private readonly exchange: CcxtExchangeLike;
  private readonly now: () => number;
  private readonly defaultLimit: number;
  private readonly maxPerRequest: number;

  constructor(options: CcxtCandleSourceOptions) {
    this.exchange = options.exchange;
    this.now = options.now ?? Date.now;
    this.defaultLimit = options.defaultLimit ?? 500;
    this.maxPerRequest = options.maxPerRequest ?? 1000;
  }

  async listSymbols(): Promise<string[]> {
    return (await this.spotMarkets()).map((m) => m.symbol).sort();
  }

  async availableTimeframes(symbol: string): Promise<Timeframe[]> {
    await this.resolveMarket(symbol);
    return this.timeframes();
  }

  async fetchCandles(request: FetchCandlesRequest): Promise<CandleSeries> {
    assertValidRequest(request);
    const { symbol, timeframe, from, to, signal } = request;
    const policy = request.incompleteBucketPolicy ?? 'dropped';
    const market = await this.resolveMarket(symbol, signal);
    const available = this.timeframes();
    if (!available.includes(timeframe)) {
      throw new UnsupportedTimeframeError(symbol, timeframe, available);
    }
    const limit = request.limit ?? this.defaultLimit;
    if (limit > this.maxPerRequest) {
      throw new InvalidCandleRequestError(
        `limit ${limit} exceeds ${this.maxPerRequest} candles per request on ${this.exchange.id}`,
        { limit, max: this.maxPerRequest },
      );
    }
    // One extra candle: the still-forming one that policy 'dropped' removes.
    const ask = Math.min(limit + 1, this.maxPerRequest);
    const since = from ?? (to === undefined ? undefined : addBuckets(to, timeframe, -ask));

    const raw = await this.call(
      () => this.exchange.fetchOHLCV(market.symbol, timeframe, since, ask),
      { symbol, timeframe },
      signal,
    );
    const rows = parseOhlcvRows(raw, this.exchange.id).filter(
      (row) =>
        (from === undefined || row.openTime >= from) && (to === undefined || row.openTime < to),
    );
    let candles: Candle[];
    try {
      const now = this.now();
      const buckets = resample(rows, {
        from: timeframe,
        to: timeframe,
        coverageEnd: to === undefined ? now : Math.min(now, to),
      });
      candles = applyIncompleteBucketPolicy(buckets, policy);
    } catch (error) {
      if (!(error instanceof ResampleInputError)) throw error;
      throw new MarketDataUnavailableError(
        `${this.exchange.id} returned unusable candles for ${market.symbol} ${timeframe}: ${error.message}`,
        { exchange: this.exchange.id, marketSymbol: market.symbol, timeframe },
        { retryable: false },
      );
    }

    const source: OhlcvSource = {
      provider: 'ccxt',
      exchange: this.exchange.id,
      marketSymbol: market.symbol,
      // ccxt's unified OHLCV volume is the base-asset amount on spot markets.
      volumeUnit: 'base',
    };
    return {
      symbol,
      timeframe,
      candles: candles.slice(-limit),
      source,
      incompleteBucketPolicy: policy,
    };
  }

  private timeframes(): Timeframe[] {
    const native = this.exchange.timeframes ?? {};
    return TIMEFRAMES.filter((tf) => Object.hasOwn(native, tf));
  }

  private async spotMarkets(signal?: AbortSignal): Promise<CcxtMarketLike[]> {
    const markets = await this.call(() => this.exchange.loadMarkets(), {}, signal);
    return Object.values(markets).filter(
      (m): m is CcxtMarketLike => m !== undefined && m.spot !== false && m.active !== false,
    );
  }

  /** BTC-USDT, BTC/USDT, btcusdt → the spot market BTC/USDT. */
  private async resolveMarket(symbol: string, signal?: AbortSignal): Promise<CcxtMarketLike> {
    const markets = await this.spotMarkets(signal);
    const key = compactSymbol(symbol);
    const separated = /[-/]/.test(symbol);
    const [base, quote] = symbol.toUpperCase().split(/[-/]/);
    const match =
      markets.find((m) => separated && m.base === base && m.quote === quote) ??
      markets.find((m) => compactSymbol(`${m.base}${m.quote}`) === key) ??
      markets.find((m) => m.id !== undefined && compactSymbol(m.id) === key);
    if (match !== undefined) return match;

    const related = markets
      .filter((m) => key.startsWith(m.base.toUpperCase()) || key.endsWith(m.quote.toUpperCase()))
      .map((m) => m.symbol)
      .sort()
      .slice(0, MAX_SUGGESTIONS);
    throw new UnknownSymbolError(symbol, related, {
      exchange: this.exchange.id,
      spotMarketCount: markets.length,
      hint: 'availableSymbols lists related spot markets of the exchange, not all of them',
    });
  }

  private async call<T>(
    operation: () => Promise<T>,
    context: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<T> {
    signal?.throwIfAborted();
    try {
      return await raceAbort(operation(), signal);
    } catch (error) {
      if (signal?.aborted === true) throw error;
      throw mapCcxtError(error, { exchange: this.exchange.id, ...context });
    }
  }
}

/** ccxt OHLCV rows → candles; a row that is not six finite numbers is an unusable response. */
function parseOhlcvRows(
  raw: ReadonlyArray<ReadonlyArray<number | undefined>>,
  exchange: string,
): Candle[] {
  return raw.map((row, index) => {
    const [openTime, open, high, low, close, volume] = row;
    if (
      openTime === undefined ||
      open === undefined ||
      high === undefined ||
      low === undefined ||
      close === undefined ||
      volume === undefined ||
      ![openTime, open, high, low, close, volume].every(Number.isFinite)
    ) {
      throw new MarketDataUnavailableError(
        `${exchange} returned a malformed OHLCV row at index ${index}`,
        { exchange, index },
        { retryable: false },
      );
    }
    return { openTime, open, high, low, close, volume };
  });
}

/**
 * ccxt calls cannot be cancelled; on abort stop waiting for it (the request itself ends at the
 * exchange's own timeout) so that the step stops promptly on cancel, lease loss or deadline.
 */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
