import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { rejectionOf } from '@tda/test-support';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { parseCandleCsv } from '../bundled/candle-csv';
import { DEFAULT_BUNDLED_DATA_DIR } from '../data-dir';
import { MarketDataError } from '../market-data.errors';
import { formatTimestamp } from '../timeframes';
import { CcxtCandleSource } from './ccxt-candle.source';
import { createCcxtExchange } from './ccxt-exchange.factory';

/**
 * A REAL ccxt binance client (its request building, response handling, market and kline parsing
 * and error classification all run) whose HTTP layer is replaced by recorded Binance responses.
 * The stub throws on any URL it does not know, and the global fetch is poisoned: nothing can reach
 * the network.
 */
const fixture = (name: string): string => readFileSync(join(__dirname, 'fixtures', name), 'utf8');
const EXCHANGE_INFO = fixture('binance-api-v3-exchangeInfo-spot.json');
const KLINES = JSON.parse(fixture('binance-api-v3-klines-BTCUSDT-1h.json')) as unknown[][];
const RECORDED_AT = Date.parse('2026-09-20T10:30:00Z');

type Responder = (url: URL) => Response | undefined;

interface Stub {
  requests: string[];
  fetchImplementation: (url: string, init: RequestInit) => Promise<Response>;
}

function json(body: unknown, status = 200): Response {
  return new Response(typeof body === 'string' ? body : JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json' },
  });
}

/** Serves exchangeInfo and klines like api.binance.com (newest `limit` klines), else throws. */
function binanceStub(override: Responder = () => undefined): Stub {
  const requests: string[] = [];
  return {
    requests,
    fetchImplementation: (raw, init) => {
      const url = new URL(raw);
      requests.push(`${init.method ?? 'GET'} ${url.pathname}${url.search}`);
      if (url.origin !== 'https://api.binance.com') {
        return Promise.reject(new Error(`unexpected request to ${url.origin}`));
      }
      const custom = override(url);
      if (custom !== undefined) return Promise.resolve(custom);
      if (url.pathname === '/api/v3/exchangeInfo') return Promise.resolve(json(EXCHANGE_INFO));
      if (url.pathname === '/api/v3/klines' && url.searchParams.get('symbol') === 'BTCUSDT') {
        const limit = Number(url.searchParams.get('limit') ?? '500');
        const startTime = url.searchParams.get('startTime');
        // like Binance: the first `limit` klines from startTime, else the newest `limit`
        const klines =
          startTime === null
            ? KLINES.slice(-limit)
            : KLINES.filter((k) => Number(k[0]) >= Number(startTime)).slice(0, limit);
        return Promise.resolve(json(klines));
      }
      return Promise.reject(new Error(`unexpected request ${url.pathname}${url.search}`));
    },
  };
}

async function sourceWith(stub: Stub): Promise<CcxtCandleSource> {
  const exchange = await createCcxtExchange('binance', {
    fetchImplementation: stub.fetchImplementation,
  });
  return new CcxtCandleSource({ exchange, now: () => RECORDED_AT });
}

describe('CcxtCandleSource over a real ccxt.binance with recorded HTTP responses', () => {
  beforeEach(() => {
    vi.spyOn(globalThis, 'fetch').mockRejectedValue(new Error('network access in a unit test'));
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('loads spot markets and parses the klines into the CSV values', async () => {
    const stub = binanceStub();
    const source = await sourceWith(stub);
    const series = await source.fetchCandles({
      symbol: 'BTC-USDT',
      timeframe: '1h',
      limit: 29,
      incompleteBucketPolicy: 'marked',
    });
    expect(stub.requests).toEqual([
      'GET /api/v3/exchangeInfo',
      'GET /api/v3/klines?interval=1h&limit=30&symbol=BTCUSDT',
    ]);
    const csv = parseCandleCsv(
      readFileSync(join(DEFAULT_BUNDLED_DATA_DIR, 'BTCUSDT_1h.csv'), 'utf8'),
      'BTCUSDT_1h.csv',
    ).slice(-29);
    expect(series.candles.map(({ complete: _, ...candle }) => candle)).toEqual(csv);
    // recorded at 10:30: the 10:00 candle is the forming one
    expect(series.candles.at(-1)?.complete).toBe(false);
    expect(formatTimestamp(series.candles.at(-1)?.openTime ?? 0)).toBe('2026-09-20T10:00:00Z');
    expect(series.source).toEqual({
      provider: 'ccxt',
      exchange: 'binance',
      marketSymbol: 'BTC/USDT',
      volumeUnit: 'base',
    });
    expect(await source.listSymbols()).toEqual(['BTC/USDT', 'ETH/USDT']);
    expect(await source.availableTimeframes('ETHUSDT')).toEqual(['1h', '4h', '1d', '1w', '1M']);
    expect(globalThis.fetch).not.toHaveBeenCalled();
  });

  it('with asOf: asks closed klines from startTime and never reads the forming one', async () => {
    const stub = binanceStub();
    const source = await sourceWith(stub);
    const asOf = Date.parse('2026-09-20T10:00:00Z');
    expect(await source.coverage('BTC-USDT', '1h')).toMatchObject({ to: asOf, from: null });
    const series = await source.fetchCandles({
      symbol: 'BTC-USDT',
      timeframe: '1h',
      limit: 3,
      asOf,
      incompleteBucketPolicy: 'marked',
    });
    expect(stub.requests).toEqual([
      'GET /api/v3/exchangeInfo',
      `GET /api/v3/klines?interval=1h&limit=3&symbol=BTCUSDT&startTime=${Date.parse('2026-09-20T07:00:00Z')}`,
    ]);
    expect(series.candles.map((c) => [formatTimestamp(c.openTime), c.complete])).toEqual([
      ['2026-09-20T07:00:00Z', undefined],
      ['2026-09-20T08:00:00Z', undefined],
      ['2026-09-20T09:00:00Z', undefined],
    ]);
    expect(globalThis.fetch).not.toHaveBeenCalled();
  });

  it('HTTP 429 → ccxt DDoSProtection (a NetworkError) → MARKET_DATA_UNAVAILABLE, retryable', async () => {
    const stub = binanceStub((url) =>
      url.pathname === '/api/v3/klines'
        ? json({ code: -1003, msg: 'Too many requests; current limit is 6000.' }, 429)
        : undefined,
    );
    const error = await rejectionOf(
      (await sourceWith(stub)).fetchCandles({ symbol: 'BTC-USDT', timeframe: '1h' }),
    );
    expect(error).toBeInstanceOf(MarketDataError);
    expect(error).toMatchObject({
      code: 'MARKET_DATA_UNAVAILABLE',
      retryable: true,
      details: { exchange: 'binance', errorClass: 'DDoSProtection' },
    });
  });

  it('HTTP 503 → ccxt ExchangeNotAvailable → MARKET_DATA_UNAVAILABLE, retryable', async () => {
    const stub = binanceStub((url) =>
      url.pathname === '/api/v3/exchangeInfo'
        ? new Response('<html>Service Unavailable</html>', { status: 503 })
        : undefined,
    );
    const error = await rejectionOf(
      (await sourceWith(stub)).fetchCandles({ symbol: 'BTC-USDT', timeframe: '1h' }),
    );
    expect(error).toMatchObject({
      code: 'MARKET_DATA_UNAVAILABLE',
      retryable: true,
      details: { errorClass: 'ExchangeNotAvailable' },
    });
  });

  it('a transport failure → ccxt NetworkError → MARKET_DATA_UNAVAILABLE, retryable', async () => {
    const stub = binanceStub((url) => {
      if (url.pathname === '/api/v3/klines') throw new TypeError('fetch failed');
      return undefined;
    });
    const error = await rejectionOf(
      (await sourceWith(stub)).fetchCandles({ symbol: 'BTC-USDT', timeframe: '1h' }),
    );
    expect(error).toMatchObject({
      code: 'MARKET_DATA_UNAVAILABLE',
      retryable: true,
      details: { errorClass: 'NetworkError' },
    });
  });

  it('Binance -1121 "Invalid symbol." → ccxt BadSymbol → INVALID_STEP_INPUTS', async () => {
    const stub = binanceStub((url) =>
      url.pathname === '/api/v3/klines' && url.searchParams.get('symbol') === 'ETHUSDT'
        ? json({ code: -1121, msg: 'Invalid symbol.' }, 400)
        : undefined,
    );
    const error = await rejectionOf(
      (await sourceWith(stub)).fetchCandles({ symbol: 'ETH-USDT', timeframe: '1h' }),
    );
    expect(error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      retryable: false,
      details: { errorClass: 'BadSymbol' },
    });
  });

  it('a symbol missing from exchangeInfo is refused before any kline request', async () => {
    const stub = binanceStub();
    const error = await rejectionOf(
      (await sourceWith(stub)).fetchCandles({ symbol: 'SOL-USDT', timeframe: '1h' }),
    );
    expect(error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      details: { availableSymbols: ['BTC/USDT', 'ETH/USDT'] },
    });
    expect(stub.requests).toEqual(['GET /api/v3/exchangeInfo']);
  });

  it('refuses an unknown exchange id', async () => {
    await expect(createCcxtExchange('no-such-exchange')).rejects.toMatchObject({
      code: 'MARKET_DATA_UNAVAILABLE',
      retryable: false,
      details: { exchange: 'no-such-exchange' },
    });
  });
});
