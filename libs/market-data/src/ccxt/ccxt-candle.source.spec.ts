import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  BadSymbol,
  ExchangeError,
  ExchangeNotAvailable,
  NetworkError,
  OnMaintenance,
  RateLimitExceeded,
  RequestTimeout,
} from 'ccxt';
import { rejectionOf } from '@tda/test-support';
import { describe, expect, it } from 'vitest';
import { parseCandleCsv } from '../bundled/candle-csv';
import { DEFAULT_BUNDLED_DATA_DIR } from '../data-dir';
import {
  InvalidCandleRequestError,
  MarketDataUnavailableError,
  UnknownSymbolError,
  UnsupportedTimeframeError,
} from '../market-data.errors';
import { formatTimestamp } from '../timeframes';
import { CcxtCandleSource, type CcxtExchangeLike, type CcxtMarketLike } from './ccxt-candle.source';
import { ccxtErrorClasses } from './ccxt-errors';

type Row = [number, number, number, number, number, number];

const RECORDED = JSON.parse(
  readFileSync(join(__dirname, 'fixtures/binance-BTCUSDT-1h.fetchOHLCV.json'), 'utf8'),
) as Row[];
const t = (iso: string): number => Date.parse(iso);
/** The recording's moment: the 10:00 candle is still forming. */
const RECORDED_AT = t('2026-09-20T10:30:00Z');

const MARKETS: Record<string, CcxtMarketLike> = {
  'BTC/USDT': {
    id: 'BTCUSDT',
    symbol: 'BTC/USDT',
    base: 'BTC',
    quote: 'USDT',
    spot: true,
    active: true,
  },
  'ETH/USDT': {
    id: 'ETHUSDT',
    symbol: 'ETH/USDT',
    base: 'ETH',
    quote: 'USDT',
    spot: true,
    active: true,
  },
  'ETH/BTC': {
    id: 'ETHBTC',
    symbol: 'ETH/BTC',
    base: 'ETH',
    quote: 'BTC',
    spot: true,
    active: true,
  },
  // a perpetual swap with the same base/quote must never be picked for a spot symbol
  'BTC/USDT:USDT': {
    id: 'BTCUSDT',
    symbol: 'BTC/USDT:USDT',
    base: 'BTC',
    quote: 'USDT',
    spot: false,
  },
};

interface OhlcvCall {
  symbol: string;
  timeframe: string | undefined;
  since: number | undefined;
  limit: number | undefined;
}

/** A typed fake of the ccxt subset, answering like Binance from recorded fetchOHLCV output. */
class RecordedExchange implements CcxtExchangeLike {
  readonly id = 'binance';
  readonly calls: OhlcvCall[] = [];
  fail: unknown = undefined;
  failMarkets: unknown = undefined;
  hang = false;

  constructor(
    private readonly rows: readonly Row[] = RECORDED,
    readonly timeframes: Record<string, string> = {
      '1h': '1h',
      '4h': '4h',
      '1d': '1d',
      '1w': '1w',
      '1M': '1M',
    },
  ) {}

  async loadMarkets(): Promise<Record<string, CcxtMarketLike>> {
    if (this.failMarkets !== undefined) throw this.failMarkets;
    return MARKETS;
  }

  fetchOHLCV(symbol: string, timeframe?: string, since?: number, limit?: number): Promise<Row[]> {
    this.calls.push({ symbol, timeframe, since, limit });
    if (this.hang) return new Promise<Row[]>(() => undefined);
    if (this.fail !== undefined) return Promise.reject(this.fail as Error);
    const n = limit ?? 500;
    // Binance: without startTime the newest `limit` klines, else the first `limit` from startTime
    const rows =
      since === undefined
        ? this.rows.slice(-n)
        : this.rows.filter((r) => r[0] >= since).slice(0, n);
    return Promise.resolve(rows.map((r) => [...r]));
  }
}

function sourceWith(exchange: CcxtExchangeLike, now = RECORDED_AT): CcxtCandleSource {
  return new CcxtCandleSource({ exchange, now: () => now });
}

describe('recorded fixture', () => {
  it('is the last 30 rows of the bundled Binance BTCUSDT CSV', () => {
    const csv = parseCandleCsv(
      readFileSync(join(DEFAULT_BUNDLED_DATA_DIR, 'BTCUSDT_1h.csv'), 'utf8'),
      'BTCUSDT_1h.csv',
    ).slice(-30);
    expect(
      RECORDED.map(([openTime, open, high, low, close, volume]) => ({
        openTime,
        open,
        high,
        low,
        close,
        volume,
      })),
    ).toEqual(csv);
  });
});

describe('CcxtCandleSource with a recorded exchange', () => {
  it('returns the newest complete candles and drops the forming one (default policy)', async () => {
    const exchange = new RecordedExchange();
    const series = await sourceWith(exchange).fetchCandles({
      symbol: 'BTC-USDT',
      timeframe: '1h',
      limit: 5,
    });
    // one extra candle asked for: the forming one that 'dropped' removes
    expect(exchange.calls).toEqual([
      { symbol: 'BTC/USDT', timeframe: '1h', since: undefined, limit: 6 },
    ]);
    expect(series.candles.map((c) => formatTimestamp(c.openTime))).toEqual([
      '2026-09-20T05:00:00Z',
      '2026-09-20T06:00:00Z',
      '2026-09-20T07:00:00Z',
      '2026-09-20T08:00:00Z',
      '2026-09-20T09:00:00Z',
    ]);
    expect(series.candles.at(-1)).toEqual({
      openTime: t('2026-09-20T09:00:00Z'),
      // the CSV row "2026-09-20 09:00:00,80264.85,80581.82,80256.82,80470.01,215.53752"
      open: 80264.85,
      high: 80581.82,
      low: 80256.82,
      close: 80470.01,
      volume: 215.53752,
    });
    expect(series.source).toEqual({
      provider: 'ccxt',
      exchange: 'binance',
      marketSymbol: 'BTC/USDT',
      volumeUnit: 'base',
    });
    expect(series.incompleteBucketPolicy).toBe('dropped');
  });

  it("marks the forming candle under 'marked'", async () => {
    const series = await sourceWith(new RecordedExchange()).fetchCandles({
      symbol: 'BTC/USDT',
      timeframe: '1h',
      limit: 2,
      incompleteBucketPolicy: 'marked',
    });
    expect(series.candles.map((c) => [formatTimestamp(c.openTime), c.complete])).toEqual([
      ['2026-09-20T09:00:00Z', undefined],
      ['2026-09-20T10:00:00Z', false],
    ]);
  });

  it('treats the last candle as complete once its hour is over', async () => {
    const series = await sourceWith(new RecordedExchange(), t('2026-09-20T11:00:00Z')).fetchCandles(
      {
        symbol: 'btcusdt',
        timeframe: '1h',
        limit: 1,
        incompleteBucketPolicy: 'marked',
      },
    );
    expect(series.candles).toEqual([
      {
        openTime: t('2026-09-20T10:00:00Z'),
        open: 80470.01,
        high: 80515.83,
        low: 80319.58,
        close: 80319.58,
        volume: 199.82514,
      },
    ]);
  });

  it('maps every spelling to the spot market, never the swap', async () => {
    for (const symbol of ['BTC-USDT', 'BTC/USDT', 'BTCUSDT', 'btc-usdt']) {
      const exchange = new RecordedExchange();
      await sourceWith(exchange).fetchCandles({ symbol, timeframe: '1h', limit: 1 });
      expect(exchange.calls[0]?.symbol).toBe('BTC/USDT');
    }
    expect(await sourceWith(new RecordedExchange()).listSymbols()).toEqual([
      'BTC/USDT',
      'ETH/BTC',
      'ETH/USDT',
    ]);
  });

  it('asks from `to` backwards and keeps candles before it', async () => {
    const exchange = new RecordedExchange();
    const series = await sourceWith(exchange).fetchCandles({
      symbol: 'BTC-USDT',
      timeframe: '1h',
      limit: 3,
      to: t('2026-09-20T00:00:00Z'),
    });
    expect(exchange.calls[0]?.since).toBe(t('2026-09-19T20:00:00Z'));
    expect(series.candles.map((c) => formatTimestamp(c.openTime))).toEqual([
      '2026-09-19T21:00:00Z',
      '2026-09-19T22:00:00Z',
      '2026-09-19T23:00:00Z',
    ]);
  });

  it('unknown symbol → INVALID_STEP_INPUTS naming related markets of the exchange', async () => {
    const error = await rejectionOf(
      sourceWith(new RecordedExchange()).fetchCandles({ symbol: 'DOGE-USDT', timeframe: '1h' }),
    );
    expect(error).toBeInstanceOf(UnknownSymbolError);
    expect(error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      message: "unknown symbol 'DOGE-USDT'; available: BTC/USDT, ETH/USDT",
      details: {
        symbol: 'DOGE-USDT',
        availableSymbols: ['BTC/USDT', 'ETH/USDT'],
        exchange: 'binance',
        spotMarketCount: 3,
      },
    });
  });

  it('unsupported timeframe → INVALID_STEP_INPUTS naming the native timeframes', async () => {
    const exchange = new RecordedExchange(RECORDED, { '1m': '1m', '1h': '1h', '1d': '1d' });
    const source = sourceWith(exchange);
    expect(await source.availableTimeframes('BTC-USDT')).toEqual(['1h', '1d']);
    const error = await rejectionOf(source.fetchCandles({ symbol: 'BTC-USDT', timeframe: '1M' }));
    expect(error).toBeInstanceOf(UnsupportedTimeframeError);
    expect(error).toMatchObject({ details: { availableTimeframes: ['1h', '1d'] } });
    expect(exchange.calls).toEqual([]);
  });

  it('refuses more candles than one request can bring', async () => {
    const error = await rejectionOf(
      sourceWith(new RecordedExchange()).fetchCandles({
        symbol: 'BTC-USDT',
        timeframe: '1h',
        limit: 1001,
      }),
    );
    expect(error).toBeInstanceOf(InvalidCandleRequestError);
  });

  it('rejects a malformed row as unusable (not retryable)', async () => {
    const broken = new RecordedExchange([[t('2026-09-20T10:00:00Z'), 1, 2, 0.5, Number.NaN, 1]]);
    const error = await rejectionOf(
      sourceWith(broken).fetchCandles({ symbol: 'BTC-USDT', timeframe: '1h' }),
    );
    expect(error).toBeInstanceOf(MarketDataUnavailableError);
    expect(error).toMatchObject({ retryable: false });
  });

  it('stops waiting when the signal aborts', async () => {
    const exchange = new RecordedExchange();
    exchange.hang = true;
    const controller = new AbortController();
    const pending = sourceWith(exchange).fetchCandles({
      symbol: 'BTC-USDT',
      timeframe: '1h',
      signal: controller.signal,
    });
    controller.abort(new Error('lease lost'));
    await expect(pending).rejects.toThrow('lease lost');
  });
});

describe('ccxt error mapping', () => {
  const cases: Array<[string, Error, string, boolean]> = [
    [
      'RateLimitExceeded',
      new RateLimitExceeded('binance 429 Too Many Requests'),
      'MARKET_DATA_UNAVAILABLE',
      true,
    ],
    [
      'ExchangeNotAvailable',
      new ExchangeNotAvailable('binance 503'),
      'MARKET_DATA_UNAVAILABLE',
      true,
    ],
    [
      'OnMaintenance',
      new OnMaintenance('binance system maintenance'),
      'MARKET_DATA_UNAVAILABLE',
      true,
    ],
    [
      'RequestTimeout',
      new RequestTimeout('binance GET https://api.binance.com/api/v3/klines?symbol=X timed out'),
      'MARKET_DATA_UNAVAILABLE',
      true,
    ],
    ['NetworkError', new NetworkError('fetch failed'), 'MARKET_DATA_UNAVAILABLE', true],
    [
      'BadSymbol',
      new BadSymbol('binance does not have market symbol'),
      'INVALID_STEP_INPUTS',
      false,
    ],
    [
      'ExchangeError',
      new ExchangeError('binance {"code":-1000}'),
      'MARKET_DATA_UNAVAILABLE',
      false,
    ],
  ];

  for (const [name, thrown, code, retryable] of cases) {
    it(`${name} → ${code}${retryable ? ' (retryable)' : ''}`, async () => {
      const exchange = new RecordedExchange();
      exchange.fail = thrown;
      const error = await rejectionOf(
        sourceWith(exchange).fetchCandles({ symbol: 'BTC-USDT', timeframe: '1h' }),
      );
      expect(error).toMatchObject({
        code,
        retryable,
        details: { exchange: 'binance', errorClass: name },
      });
      // query strings (which may carry signatures) never reach the message
      expect(String((error as Error).message)).not.toContain('symbol=X');
    });
  }

  it('maps failures to load the markets too', async () => {
    const exchange = new RecordedExchange();
    exchange.failMarkets = new ExchangeNotAvailable('binance 502 Bad Gateway');
    const error = await rejectionOf(sourceWith(exchange).listSymbols());
    expect(error).toMatchObject({ code: 'MARKET_DATA_UNAVAILABLE', retryable: true });
  });

  it('leaves errors that are not ccxt’s alone (a bug is not an outage)', async () => {
    const exchange = new RecordedExchange();
    const bug = new TypeError('x is not a function');
    exchange.fail = bug;
    expect(
      await rejectionOf(sourceWith(exchange).fetchCandles({ symbol: 'BTC-USDT', timeframe: '1h' })),
    ).toBe(bug);
    expect(ccxtErrorClasses(bug)).toEqual([]);
    expect(ccxtErrorClasses(new RateLimitExceeded('x'))).toEqual([
      'RateLimitExceeded',
      'NetworkError',
      'OperationFailed',
      'BaseError',
    ]);
  });
});
