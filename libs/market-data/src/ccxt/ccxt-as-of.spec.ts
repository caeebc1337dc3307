import { TIMEFRAMES, type Timeframe } from '@tda/contracts';
import { rejectionOf } from '@tda/test-support';
import { describe, expect, it } from 'vitest';
import { BundledCandleSource } from '../bundled/bundled-candle.source';
import {
  AsOfOutOfRangeError,
  UnknownSymbolError,
  UnsupportedTimeframeError,
} from '../market-data.errors';
import {
  DEFAULT_AS_OF,
  EARLIER_AS_OF,
  expectCutAt,
  expectedComplete,
  expectedForming,
  hourlyRows,
  lastOf,
  sourceRows,
  t,
} from '../testing/as-of-expectations';
import { BundledReplayExchange } from '../testing/bundled-replay.exchange';
import { bucketStart, formatTimestamp, nextBucketStart } from '../timeframes';
import { CcxtCandleSource } from './ccxt-candle.source';

/** The replay's clock: 2026-09-20 10:30, the 10:00 kline is still forming (as recorded). */
const NOW = t('2026-09-20T10:30:00Z');
/** The live default asOf at NOW: the end of the newest closed 1h candle. */
const LIVE_AS_OF = t('2026-09-20T10:00:00Z');
const SYMBOLS = ['BTC-USDT', 'ETH-USDT'] as const;

function sourceOver(exchange: BundledReplayExchange, maxPerRequest?: number): CcxtCandleSource {
  return new CcxtCandleSource({
    exchange,
    now: () => NOW,
    ...(maxPerRequest === undefined ? {} : { maxPerRequest }),
  });
}

describe('CcxtCandleSource.coverage (live)', () => {
  it('ends at the start of the current hour (the newest closed 1h candle); from unknown', async () => {
    const source = sourceOver(new BundledReplayExchange(NOW));
    for (const timeframe of TIMEFRAMES) {
      expect(await source.coverage('btc-usdt', timeframe)).toEqual({
        symbol: 'BTC/USDT',
        timeframe,
        from: null,
        to: LIVE_AS_OF,
        source: 'exchange binance',
      });
    }
  });

  it('uses the finest native timeframe of the exchange, and makes no kline request', async () => {
    const exchange = new BundledReplayExchange(NOW);
    const dailyOnly = Object.assign(Object.create(exchange) as BundledReplayExchange, {
      timeframes: { '1d': '1d', '1w': '1w' },
    });
    const coverage = await sourceOver(dailyOnly).coverage('ETH/USDT', '1w');
    expect(coverage).toMatchObject({ to: t('2026-09-20T00:00:00Z'), from: null });
    expect(exchange.calls).toEqual([]);
    await expect(sourceOver(dailyOnly).coverage('ETH/USDT', '1h')).rejects.toBeInstanceOf(
      UnsupportedTimeframeError,
    );
    await expect(sourceOver(exchange).coverage('DOGE-USDT', '1h')).rejects.toBeInstanceOf(
      UnknownSymbolError,
    );
  });
});

/**
 * With asOf the source reads only closed klines whose bucket ended by asOf, and rebuilds the
 * bucket holding asOf from closed 1h klines that ended by asOf. The replay's forming kline holds
 * the whole row of the current hour (data after `now`): had the source used it, the values would
 * differ from the expectations computed from the CSV rows that ended by asOf.
 */
describe('CcxtCandleSource.fetchCandles with asOf: no data after asOf', () => {
  for (const asOf of [DEFAULT_AS_OF, EARLIER_AS_OF, LIVE_AS_OF]) {
    for (const symbol of SYMBOLS) {
      for (const timeframe of TIMEFRAMES) {
        it(`${symbol} ${timeframe} at ${formatTimestamp(asOf)}`, async () => {
          const exchange = new BundledReplayExchange(NOW);
          const source = sourceOver(exchange);
          const request = { symbol, timeframe, asOf, limit: 40 } as const;
          const marked = await source.fetchCandles({
            ...request,
            incompleteBucketPolicy: 'marked',
          });
          expectCutAt(marked.candles, timeframe, asOf);
          expectLastReachesAsOf(marked.candles, timeframe, asOf);

          const { rows, tf } = sourceRows(symbol, timeframe);
          const complete = marked.candles.filter((c) => c.complete !== false);
          const expected = expectedComplete(rows, tf, timeframe, asOf).slice(-40);
          const forming = marked.candles.find((c) => c.complete === false);
          expect(forming).toEqual(expectedForming(hourlyRows(symbol), '1h', timeframe, asOf));
          expect(complete).toEqual(expected.slice(forming === undefined ? 0 : 1));
          // never the exchange's forming kline: no request without `since`
          expect(exchange.calls.every((call) => call.since !== undefined)).toBe(true);

          const dropped = await source.fetchCandles(request);
          expect(dropped.candles).toEqual(expected);
        });
      }
    }
  }

  it('the same complete candles as the bundled source, and the same forming week/month', async () => {
    const bundled = new BundledCandleSource();
    const source = sourceOver(new BundledReplayExchange(NOW));
    for (const timeframe of TIMEFRAMES) {
      const request = {
        symbol: 'BTC-USDT',
        timeframe,
        asOf: DEFAULT_AS_OF,
        limit: 30,
        incompleteBucketPolicy: 'marked',
      } as const;
      const live = (await source.fetchCandles(request)).candles;
      const files = (await bundled.fetchCandles(request)).candles;
      expect(live.map((c) => c.openTime)).toEqual(files.map((c) => c.openTime));
      // 1w/1M: the forming bucket from 1h klines equals the one from the daily rows
      // (OHLC identical; volumes equal up to float rounding of the two sums)
      live.forEach((c, i) => {
        const { volume, ...ohlc } = c;
        const { volume: fileVolume, ...fileOhlc } = files[i] ?? c;
        expect(ohlc).toEqual(fileOhlc);
        expect(volume).toBeCloseTo(fileVolume, 4);
      });
    }
  });
});

/**
 * The last candle reaches asOf: the forming one holds it, or the last complete one ends exactly
 * at asOf (1h always: nothing finer to build a forming hour from; others when asOf is a bucket
 * boundary).
 */
function expectLastReachesAsOf(
  candles: Parameters<typeof lastOf>[0],
  timeframe: Timeframe,
  asOf: number,
): void {
  const [openTime, complete] = lastOf(candles);
  const open = t(openTime);
  if (complete) {
    expect(formatTimestamp(nextBucketStart(open, timeframe))).toBe(formatTimestamp(asOf));
  } else {
    expect(open).toBe(bucketStart(asOf, timeframe));
  }
}

describe('CcxtCandleSource.fetchCandles with asOf: requests', () => {
  it('asks closed klines with since = limit buckets before the one holding asOf, then the 1h klines of that bucket', async () => {
    const exchange = new BundledReplayExchange(NOW);
    const { candles } = await sourceOver(exchange).fetchCandles({
      symbol: 'ETH-USDT',
      timeframe: '1M',
      asOf: EARLIER_AS_OF,
      limit: 5,
      incompleteBucketPolicy: 'marked',
    });
    expect(exchange.calls).toEqual([
      { symbol: 'ETH/USDT', timeframe: '1M', since: t('2026-01-01T00:00:00Z'), limit: 5 },
      // 2026-06-01 00:00 .. 06-15 12:00: 14 days and 13 hours
      { symbol: 'ETH/USDT', timeframe: '1h', since: t('2026-06-01T00:00:00Z'), limit: 349 },
    ]);
    expect(candles.map((c) => [formatTimestamp(c.openTime), c.complete])).toEqual([
      ['2026-02-01T00:00:00Z', undefined],
      ['2026-03-01T00:00:00Z', undefined],
      ['2026-04-01T00:00:00Z', undefined],
      ['2026-05-01T00:00:00Z', undefined],
      ['2026-06-01T00:00:00Z', false],
    ]);
  });

  it('pages the 1h klines by maxPerRequest', async () => {
    const exchange = new BundledReplayExchange(NOW);
    const paged = await sourceOver(exchange, 100).fetchCandles({
      symbol: 'BTC-USDT',
      timeframe: '1M',
      asOf: EARLIER_AS_OF,
      limit: 2,
      incompleteBucketPolicy: 'marked',
    });
    expect(
      exchange.calls.map((c) => [c.timeframe, formatTimestamp(c.since ?? 0), c.limit]),
    ).toEqual([
      ['1M', '2026-04-01T00:00:00Z', 2],
      ['1h', '2026-06-01T00:00:00Z', 100],
      ['1h', '2026-06-05T04:00:00Z', 100],
      ['1h', '2026-06-09T08:00:00Z', 100],
      ['1h', '2026-06-13T12:00:00Z', 49],
    ]);
    const whole = await sourceOver(new BundledReplayExchange(NOW)).fetchCandles({
      symbol: 'BTC-USDT',
      timeframe: '1M',
      asOf: EARLIER_AS_OF,
      limit: 2,
      incompleteBucketPolicy: 'marked',
    });
    expect(paged.candles).toEqual(whole.candles);
  });

  it("'dropped' asks no 1h klines; a 1h export has no forming hour at asOf", async () => {
    const exchange = new BundledReplayExchange(NOW);
    const source = sourceOver(exchange);
    await source.fetchCandles({ symbol: 'BTC-USDT', timeframe: '1w', asOf: EARLIER_AS_OF });
    const hours = await source.fetchCandles({
      symbol: 'BTC-USDT',
      timeframe: '1h',
      asOf: t('2026-09-20T09:59:59Z'),
      incompleteBucketPolicy: 'marked',
      limit: 2,
    });
    expect(exchange.calls.map((c) => c.timeframe)).toEqual(['1w', '1h']);
    // 09:00–10:00 had not ended at 09:59:59
    expect(hours.candles.map((c) => formatTimestamp(c.openTime))).toEqual([
      '2026-09-20T07:00:00Z',
      '2026-09-20T08:00:00Z',
    ]);
  });

  it('an asOf after the newest closed 1h candle → AsOfOutOfRangeError, before any kline request', async () => {
    const exchange = new BundledReplayExchange(NOW);
    const error = await rejectionOf(
      sourceOver(exchange).fetchCandles({
        symbol: 'BTC-USDT',
        timeframe: '1d',
        asOf: t('2026-09-20T10:30:00Z'),
      }),
    );
    expect(error).toBeInstanceOf(AsOfOutOfRangeError);
    expect(error).toMatchObject({
      code: 'INVALID_REQUEST',
      details: {
        field: 'scope.asOf',
        symbol: 'BTC/USDT',
        timeframe: '1d',
        available: { from: null, to: '2026-09-20T10:00:00Z' },
        source: 'exchange binance',
      },
    });
    expect(exchange.calls).toEqual([]);
  });
});
