import { TIMEFRAMES, type OhlcvSource, type Timeframe } from '@tda/contracts';
import { assertAsOfCovered } from '../as-of';
import type { Candle, CandleSeries, IncompleteBucketPolicy } from '../candle';
import { assertValidRequest } from '../candle-request';
import type { CandleSource, DataCoverage, FetchCandlesRequest } from '../candle-source.port';
import {
  InvalidCandleRequestError,
  MarketDataUnavailableError,
  UnknownSymbolError,
  UnsupportedTimeframeError,
} from '../market-data.errors';
import { applyIncompleteBucketPolicy, resample, ResampleInputError } from '../resample';
import { addBuckets, bucketStart, canResample, nextBucketStart } from '../timeframes';
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
 * weeks on Monday). Without asOf, the candle whose bucket has not ended at `now()` is the
 * still-forming one and follows the incomplete-bucket policy. With asOf, only closed candles that
 * ended by asOf are read, and the forming bucket is rebuilt from closed 1h candles (see
 * candlesAsOf). ccxt errors are mapped by ccxt-errors.ts.
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

  /**
   * Live: `to` is the start of the current bucket of the finest native timeframe (1h on Binance),
   * i.e. the end of the newest closed candle at `now()`; `from` is unknown (null) — finding the
   * exchange's first candle would cost a request per call.
   */
  async coverage(symbol: string, timeframe: Timeframe): Promise<DataCoverage> {
    const market = await this.resolveMarket(symbol);
    this.assertTimeframe(symbol, timeframe);
    return this.coverageOf(market, timeframe);
  }

  async fetchCandles(request: FetchCandlesRequest): Promise<CandleSeries> {
    assertValidRequest(request);
    const { symbol, timeframe, asOf, signal } = request;
    const policy = request.incompleteBucketPolicy ?? 'dropped';
    const market = await this.resolveMarket(symbol, signal);
    this.assertTimeframe(symbol, timeframe);
    const limit = request.limit ?? this.defaultLimit;
    if (limit > this.maxPerRequest) {
      throw new InvalidCandleRequestError(
        `limit ${limit} exceeds ${this.maxPerRequest} candles per request on ${this.exchange.id}`,
        { limit, max: this.maxPerRequest },
      );
    }
    const candles =
      asOf === undefined
        ? await this.liveCandles(market, request, limit, policy)
        : await this.candlesAsOf(market, request, asOf, limit, policy);
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

  /** Without asOf: the newest candles; the one not ended at now() is the forming one. */
  private async liveCandles(
    market: CcxtMarketLike,
    request: FetchCandlesRequest,
    limit: number,
    policy: IncompleteBucketPolicy,
  ): Promise<Candle[]> {
    const { symbol, timeframe, from, to, signal } = request;
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
    const now = this.now();
    const coverageEnd = to === undefined ? now : Math.min(now, to);
    return this.toCandles(market, rows, timeframe, timeframe, coverageEnd, policy);
  }

  /**
   * Cut at asOf: only CLOSED candles whose bucket ended by asOf (the newest `limit` of them, asked
   * with `since`), never the exchange's forming candle. Under 'marked' the bucket holding asOf
   * is rebuilt from closed candles of the finest native timeframe that ended by asOf (see
   * formingCandleAsOf); under 'dropped' it is left out.
   */
  private async candlesAsOf(
    market: CcxtMarketLike,
    request: FetchCandlesRequest,
    asOf: number,
    limit: number,
    policy: IncompleteBucketPolicy,
  ): Promise<Candle[]> {
    const { timeframe, from, signal } = request;
    assertAsOfCovered(this.coverageOf(market, timeframe), asOf);
    const closedEnd = bucketStart(asOf, timeframe);
    const since = Math.max(
      from ?? Number.NEGATIVE_INFINITY,
      addBuckets(closedEnd, timeframe, -limit),
    );
    const rows = await this.closedRows(market, timeframe, since, closedEnd, signal);
    const candles = this.toCandles(market, rows, timeframe, timeframe, closedEnd, policy);
    if (policy === 'marked') {
      const forming = await this.formingCandleAsOf(market, timeframe, asOf, signal);
      if (forming !== undefined) candles.push(forming);
    }
    return candles;
  }

  /**
   * The bucket of `timeframe` holding asOf, aggregated from closed candles of the finest native
   * timeframe (1h on Binance) in [bucket start, asOf), marked `complete: false`. None when that
   * finest timeframe is `timeframe` itself (a 1h export has no forming 1h candle at asOf: there is
   * nothing finer to build it from), when no such candle ended yet, or when the exchange's data
   * starts inside the bucket.
   */
  private async formingCandleAsOf(
    market: CcxtMarketLike,
    timeframe: Timeframe,
    asOf: number,
    signal: AbortSignal | undefined,
  ): Promise<Candle | undefined> {
    const finest = this.finestTimeframe();
    if (finest === undefined || finest === timeframe || !canResample(timeframe, finest)) {
      return undefined;
    }
    const start = bucketStart(asOf, timeframe);
    const end = bucketStart(asOf, finest);
    if (end <= start) return undefined;
    const rows = await this.closedRows(market, finest, start, end, signal);
    const [forming] = this.toCandles(market, rows, finest, timeframe, asOf, 'marked');
    return forming?.complete === false ? forming : undefined;
  }

  /** Closed candles with since <= openTime < end, in as many requests of maxPerRequest as needed. */
  private async closedRows(
    market: CcxtMarketLike,
    timeframe: Timeframe,
    since: number,
    end: number,
    signal: AbortSignal | undefined,
  ): Promise<Candle[]> {
    const rows: Candle[] = [];
    let cursor = since;
    while (cursor < end) {
      const from = cursor;
      const ask = Math.min(this.maxPerRequest, countBuckets(from, end, timeframe));
      const raw = await this.call(
        () => this.exchange.fetchOHLCV(market.symbol, timeframe, from, ask),
        { symbol: market.symbol, timeframe },
        signal,
      );
      const page = parseOhlcvRows(raw, this.exchange.id).filter(
        (row) => row.openTime >= from && row.openTime < end,
      );
      const last = page[page.length - 1];
      rows.push(...page);
      // An empty page: the exchange has nothing more before `end` (or ignored `since`).
      if (last === undefined) break;
      cursor = nextBucketStart(last.openTime, timeframe);
    }
    return rows;
  }

  /** Native rows → candles (resample checks order and alignment); unusable rows are not retried. */
  private toCandles(
    market: CcxtMarketLike,
    rows: readonly Candle[],
    from: Timeframe,
    to: Timeframe,
    coverageEnd: number,
    policy: IncompleteBucketPolicy,
  ): Candle[] {
    try {
      return applyIncompleteBucketPolicy(resample(rows, { from, to, coverageEnd }), policy);
    } catch (error) {
      if (!(error instanceof ResampleInputError)) throw error;
      throw new MarketDataUnavailableError(
        `${this.exchange.id} returned unusable candles for ${market.symbol} ${from}: ${error.message}`,
        { exchange: this.exchange.id, marketSymbol: market.symbol, timeframe: from },
        { retryable: false },
      );
    }
  }

  private coverageOf(market: CcxtMarketLike, timeframe: Timeframe): DataCoverage {
    const finest = this.finestTimeframe() ?? timeframe;
    return {
      symbol: market.symbol,
      timeframe,
      from: null,
      to: bucketStart(this.now(), finest),
      source: `exchange ${this.exchange.id}`,
    };
  }

  private assertTimeframe(symbol: string, timeframe: Timeframe): void {
    const available = this.timeframes();
    if (!available.includes(timeframe)) {
      throw new UnsupportedTimeframeError(symbol, timeframe, available);
    }
  }

  /** The finest TDA timeframe the exchange serves natively (1h on Binance). */
  private finestTimeframe(): Timeframe | undefined {
    return this.timeframes()[0];
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

/** How many `timeframe` buckets start in [from, end) (from aligned; at least 1). */
function countBuckets(from: number, end: number, timeframe: Timeframe): number {
  let count = 1;
  for (let t = nextBucketStart(from, timeframe); t < end; t = nextBucketStart(t, timeframe)) {
    count += 1;
  }
  return count;
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
