import { TIMEFRAMES, type Timeframe } from '@tda/contracts';
import { rejectionOf } from '@tda/test-support';
import { describe, expect, it } from 'vitest';
import {
  AsOfOutOfRangeError,
  InvalidCandleRequestError,
  UnknownSymbolError,
  UnsupportedTimeframeError,
} from '../market-data.errors';
import {
  DEFAULT_AS_OF,
  EARLIER_AS_OF,
  expectCutAt,
  expectedComplete,
  expectedForming,
  lastOf,
  sourceRows,
  t,
} from '../testing/as-of-expectations';
import { bucketStart, formatTimestamp } from '../timeframes';
import { BundledCandleSource } from './bundled-candle.source';

const source = new BundledCandleSource();
const SYMBOLS = ['BTC-USDT', 'ETH-USDT'] as const;

describe('BundledCandleSource.coverage', () => {
  it('is [first row, end of the last row) of the dataset serving the timeframe', async () => {
    for (const symbol of SYMBOLS) {
      const market = symbol.replace('-', '');
      for (const timeframe of ['1h', '4h'] as const) {
        expect(await source.coverage(symbol.toLowerCase(), timeframe)).toEqual({
          symbol,
          timeframe,
          from: t('2026-02-24T04:00:00Z'),
          to: t('2026-09-20T11:00:00Z'),
          source: `bundled dataset binance/${market}_1h`,
        });
      }
      for (const timeframe of ['1d', '1w', '1M'] as const) {
        expect(await source.coverage(market, timeframe)).toEqual({
          symbol,
          timeframe,
          from: t('2017-08-17T00:00:00Z'),
          to: t('2026-09-20T00:00:00Z'),
          source: `bundled dataset binance/${market}_1d`,
        });
      }
    }
  });

  it('rejects an unknown symbol or timeframe as fetchCandles does', async () => {
    await expect(source.coverage('DOGE-USDT', '1d')).rejects.toBeInstanceOf(UnknownSymbolError);
    const dailyOnly = new BundledCandleSource({
      catalogue: [{ symbol: 'BTC-USDT', aliases: [], datasets: { '1d': 'binance/BTCUSDT_1d' } }],
    });
    const error = await rejectionOf(dailyOnly.coverage('BTC-USDT', '1h'));
    expect(error).toBeInstanceOf(UnsupportedTimeframeError);
    expect(error).toMatchObject({ details: { availableTimeframes: ['1d'] } });
  });
});

/**
 * The last candle of each timeframe under 'marked' ([openTime, complete]). At the default asOf the
 * 1h/4h/1d series end with a complete candle ending exactly at asOf and 1w/1M with the forming
 * bucket holding it. At 2026-06-15 13:00 the daily-sourced 1d and 1w (the week starts that
 * Monday) end at 00:00 that day: no daily row of 06-15 had ended by 13:00, and the bundled source
 * builds buckets only from the rows of its one dataset.
 */
const LAST: Record<'default' | 'earlier', Record<Timeframe, [string, boolean]>> = {
  default: {
    '1h': ['2026-09-19T23:00:00Z', true],
    '4h': ['2026-09-19T20:00:00Z', true],
    '1d': ['2026-09-19T00:00:00Z', true],
    '1w': ['2026-09-14T00:00:00Z', false],
    '1M': ['2026-09-01T00:00:00Z', false],
  },
  earlier: {
    '1h': ['2026-06-15T12:00:00Z', true],
    '4h': ['2026-06-15T12:00:00Z', false],
    '1d': ['2026-06-14T00:00:00Z', true],
    '1w': ['2026-06-08T00:00:00Z', true],
    '1M': ['2026-06-01T00:00:00Z', false],
  },
};

describe('BundledCandleSource.fetchCandles with asOf: no data after asOf', () => {
  for (const [name, asOf] of [
    ['default', DEFAULT_AS_OF],
    ['earlier', EARLIER_AS_OF],
  ] as const) {
    for (const symbol of SYMBOLS) {
      for (const timeframe of TIMEFRAMES) {
        it(`${symbol} ${timeframe} at ${formatTimestamp(asOf)}`, async () => {
          const { rows, tf } = sourceRows(symbol, timeframe);
          const marked = await source.fetchCandles({
            symbol,
            timeframe,
            asOf,
            incompleteBucketPolicy: 'marked',
          });
          expectCutAt(marked.candles, timeframe, asOf);
          expect(lastOf(marked.candles)).toEqual(LAST[name][timeframe]);
          // complete candles: exactly the buckets of rows that ended by asOf
          const complete = marked.candles.filter((c) => c.complete !== false);
          expect(complete).toEqual(expectedComplete(rows, tf, timeframe, asOf));
          // the forming one: only rows of its bucket that ended by asOf
          const forming = marked.candles.find((c) => c.complete === false);
          expect(forming).toEqual(expectedForming(rows, tf, timeframe, asOf));
          // 'dropped' is the same series without the forming candle
          const dropped = await source.fetchCandles({ symbol, timeframe, asOf });
          expect(dropped.candles).toEqual(complete);
          // limit counts back from asOf
          const three = await source.fetchCandles({
            symbol,
            timeframe,
            asOf,
            limit: 3,
            incompleteBucketPolicy: 'marked',
          });
          expect(three.candles).toEqual(marked.candles.slice(-3));
        });
      }
    }
  }

  it('a 1h row 10:00–11:00 is not used for asOf 10:30; its 4h bucket is built from 08:00, 09:00', async () => {
    const asOf = t('2026-09-20T10:30:00Z');
    const hours = await source.fetchCandles({ symbol: 'BTC-USDT', timeframe: '1h', asOf });
    expect(lastOf(hours.candles)).toEqual(['2026-09-20T09:00:00Z', true]);
    const { candles } = await source.fetchCandles({
      symbol: 'BTC-USDT',
      timeframe: '4h',
      asOf,
      incompleteBucketPolicy: 'marked',
      limit: 1,
    });
    // CSV rows 08:00 (80311.6, 80453.9, 80165.49, 80264.85, 288.38791) and 09:00 (80264.85,
    // 80581.82, 80256.82, 80470.01, 215.53752); the 10:00 row is left out
    expect(candles).toEqual([
      {
        openTime: t('2026-09-20T08:00:00Z'),
        open: 80311.6,
        high: 80581.82,
        low: 80165.49,
        close: 80470.01,
        volume: 503.92543,
        complete: false,
      },
    ]);
  });

  it('without asOf the newest data is served as before (1h up to 10:00 on 2026-09-20)', async () => {
    const { candles } = await source.fetchCandles({ symbol: 'BTC-USDT', timeframe: '1h' });
    expect(lastOf(candles)).toEqual(['2026-09-20T10:00:00Z', true]);
    expect(bucketStart(candles.at(-1)?.openTime ?? 0, '1d')).toBe(DEFAULT_AS_OF);
  });
});

describe('BundledCandleSource.fetchCandles: asOf refusals', () => {
  it('an asOf outside the coverage → AsOfOutOfRangeError (INVALID_REQUEST)', async () => {
    const late = await rejectionOf(
      source.fetchCandles({ symbol: 'BTC-USDT', timeframe: '1d', asOf: t('2026-09-20T06:00:00Z') }),
    );
    expect(late).toBeInstanceOf(AsOfOutOfRangeError);
    expect(late).toMatchObject({
      code: 'INVALID_REQUEST',
      details: {
        timeframe: '1d',
        available: { from: '2017-08-17T00:00:00Z', to: '2026-09-20T00:00:00Z' },
      },
    });
    const early = await rejectionOf(
      source.fetchCandles({ symbol: 'ETH-USDT', timeframe: '4h', asOf: t('2026-02-24T04:00:00Z') }),
    );
    expect(early).toBeInstanceOf(AsOfOutOfRangeError);
  });

  it('asOf with `to`, or a `from` not before asOf → InvalidCandleRequestError', async () => {
    for (const bad of [
      { asOf: DEFAULT_AS_OF, to: DEFAULT_AS_OF },
      { asOf: EARLIER_AS_OF, from: EARLIER_AS_OF },
      { asOf: Number.NaN },
    ]) {
      const error = await rejectionOf(
        source.fetchCandles({ symbol: 'BTC-USDT', timeframe: '1d', ...bad }),
      );
      expect(error).toBeInstanceOf(InvalidCandleRequestError);
    }
  });
});
