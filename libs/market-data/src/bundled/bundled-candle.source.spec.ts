import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { rejectionOf } from '@tda/test-support';
import { describe, expect, it } from 'vitest';
import type { Candle } from '../candle';
import { DEFAULT_BUNDLED_DATA_DIR } from '../data-dir';
import {
  MarketDataUnavailableError,
  UnknownSymbolError,
  UnsupportedTimeframeError,
  InvalidCandleRequestError,
} from '../market-data.errors';
import { formatTimestamp } from '../timeframes';
import { BUNDLED_SYMBOLS, findBundledSymbol } from './bundled-catalogue';
import { BundledCandleSource } from './bundled-candle.source';

const source = new BundledCandleSource();
const t = (iso: string): number => Date.parse(iso);

function at(candles: readonly Candle[], iso: string): Candle {
  const found = candles.find((c) => c.openTime === t(iso));
  if (found === undefined) throw new Error(`no candle at ${iso}`);
  return found;
}

describe('BundledCandleSource: symbol catalogue', () => {
  it('lists the canonical symbols', async () => {
    expect(await source.listSymbols()).toEqual(['BTC-USDT', 'ETH-USDT']);
  });

  it('maps every spelling of a symbol to the same entry', () => {
    for (const entry of BUNDLED_SYMBOLS) {
      for (const spelling of [entry.symbol, ...entry.aliases, entry.symbol.toLowerCase()]) {
        expect(findBundledSymbol(spelling)?.symbol).toBe(entry.symbol);
      }
    }
    expect(findBundledSymbol('BTCUSDT')?.symbol).toBe('BTC-USDT');
    expect(findBundledSymbol('eth/usdt')?.symbol).toBe('ETH-USDT');
    // the Yahoo BTC-USD dataset is gone: one market (Binance spot) per symbol
    expect(findBundledSymbol('BTC-USD')).toBeUndefined();
    expect(findBundledSymbol('DOGE-USDT')).toBeUndefined();
  });

  it('names the timeframes of each symbol', async () => {
    expect(await source.availableTimeframes('BTC/USDT')).toEqual(['1h', '4h', '1d', '1w', '1M']);
    expect(await source.availableTimeframes('eth-usdt')).toEqual(['1h', '4h', '1d', '1w', '1M']);
  });

  it('serves 1h/4h from the Binance hourly file and 1d/1w/1M from the Binance daily file', async () => {
    const hourly = await source.fetchCandles({ symbol: 'BTC/USDT', timeframe: '4h', limit: 1 });
    expect(hourly.source).toEqual({
      provider: 'bundled',
      dataset: 'binance/BTCUSDT_1h',
      marketSymbol: 'BTCUSDT',
      sourceTimeframe: '1h',
      volumeUnit: 'base',
    });
    const monthly = await source.fetchCandles({ symbol: 'BTCUSDT', timeframe: '1M' });
    expect(monthly.source).toEqual({
      provider: 'bundled',
      dataset: 'binance/BTCUSDT_1d',
      marketSymbol: 'BTCUSDT',
      sourceTimeframe: '1d',
      volumeUnit: 'base',
    });
    // a meaningful monthly chart: 2017-09 .. 2026-08 are whole months
    expect(formatTimestamp(monthly.candles[0]?.openTime ?? 0)).toBe('2017-09-01T00:00:00Z');
    const native = await source.fetchCandles({ symbol: 'ETH/USDT', timeframe: '1d', limit: 1 });
    expect(native.source).toEqual({
      provider: 'bundled',
      dataset: 'binance/ETHUSDT_1d',
      marketSymbol: 'ETHUSDT',
      volumeUnit: 'base',
    });
    expect(native.symbol).toBe('ETH/USDT');
  });
});

describe('BundledCandleSource: resampling real rows (values computed by hand from the CSV)', () => {
  it('4h from Binance hours: the first bucket 2026-02-24 04:00 = rows 04,05,06,07', async () => {
    const { candles } = await source.fetchCandles({ symbol: 'BTC-USDT', timeframe: '4h' });
    expect(candles[0]).toEqual({
      openTime: t('2026-02-24T04:00:00Z'),
      open: 63595.51, // 04:00 open
      high: 63628.52, // 04:00 high (05: 63551.58, 06: 63322.28, 07: 63367.2)
      low: 62700.8, // 05:00 low
      close: 63192.96, // 07:00 close
      volume: 4939.8898, // 2096.9105 + 1274.07037 + 677.94768 + 890.96125
    });
  });

  it('1d is the daily file as is; its days equal the hourly aggregates (2026-02-25)', async () => {
    const { candles } = await source.fetchCandles({ symbol: 'BTC-USDT', timeframe: '1d' });
    expect(formatTimestamp(candles[0]?.openTime ?? 0)).toBe('2017-08-17T00:00:00Z');
    // the same values the 24 hourly rows of 2026-02-25 aggregate to (00:00 open, 23:00 close)
    expect(at(candles, '2026-02-25T00:00:00Z')).toEqual({
      openTime: t('2026-02-25T00:00:00Z'),
      open: 64058.15,
      high: 69988.83,
      low: 63913.27,
      close: 67988.04,
      volume: 30749.99259,
    });
    const hours = await source.fetchCandles({
      symbol: 'BTC-USDT',
      timeframe: '1h',
      from: t('2026-02-25T00:00:00Z'),
      to: t('2026-02-26T00:00:00Z'),
    });
    expect(hours.candles).toHaveLength(24);
    expect(hours.candles[0]?.open).toBe(64058.15);
    expect(hours.candles[23]?.close).toBe(67988.04);
  });

  it('the last week (Monday 2026-09-14, 6 of 7 days) is dropped or marked incomplete by policy', async () => {
    const dropped = await source.fetchCandles({ symbol: 'BTC-USDT', timeframe: '1w' });
    expect(formatTimestamp(dropped.candles.at(-1)?.openTime ?? 0)).toBe('2026-09-07T00:00:00Z');
    expect(dropped.incompleteBucketPolicy).toBe('dropped');
    const marked = await source.fetchCandles({
      symbol: 'BTC-USDT',
      timeframe: '1w',
      incompleteBucketPolicy: 'marked',
    });
    expect(marked.candles).toHaveLength(dropped.candles.length + 1);
    expect(marked.candles.at(-1)).toEqual({
      openTime: t('2026-09-14T00:00:00Z'),
      open: 76842.01, // Mon 09-14 open
      high: 81951,
      low: 74967.97,
      close: 81249.99, // Sat 09-19 close
      volume: 97480.76023,
      complete: false,
    });
    expect(marked.candles.filter((c) => c.complete === false)).toHaveLength(1);
  });

  it('the last 4h bucket (08:00, only 08..10 present) is incomplete too', async () => {
    const { candles } = await source.fetchCandles({
      symbol: 'BTC-USDT',
      timeframe: '4h',
      incompleteBucketPolicy: 'marked',
      limit: 2,
    });
    expect(candles.map((c) => [formatTimestamp(c.openTime), c.complete])).toEqual([
      ['2026-09-20T04:00:00Z', undefined],
      ['2026-09-20T08:00:00Z', false],
    ]);
    expect(candles[1]).toMatchObject({ open: 80311.6, high: 80581.82, low: 80165.49 });
    expect(candles[1]?.volume).toBe(703.75057);
  });

  it('1h is served as is: every row complete, the newest row last', async () => {
    const { candles } = await source.fetchCandles({ symbol: 'BTC-USDT', timeframe: '1h' });
    expect(candles).toHaveLength(4999);
    expect(candles.at(-1)).toEqual({
      openTime: t('2026-09-20T10:00:00Z'),
      open: 80470.01,
      high: 80515.83,
      low: 80319.58,
      close: 80319.58,
      volume: 199.82514,
    });
  });

  it('1M from Binance days: February 2020 has 29 days (leap year)', async () => {
    const { candles } = await source.fetchCandles({ symbol: 'BTC-USDT', timeframe: '1M' });
    expect(at(candles, '2020-02-01T00:00:00Z')).toEqual({
      openTime: t('2020-02-01T00:00:00Z'),
      open: 9351.71, // 2020-02-01 open
      high: 10500,
      low: 8445,
      close: 8523.61, // 2020-02-29 close (29 rows)
      volume: 1609726.154564,
    });
    // the next month opens on March 1st, not on a fixed 30-day step
    expect(at(candles, '2020-03-01T00:00:00Z').open).toBe(8523.61);
  });

  it('1w from Binance days: Monday weeks, including one spanning March/April 2020', async () => {
    const { candles } = await source.fetchCandles({ symbol: 'BTC-USDT', timeframe: '1w' });
    expect(candles.every((c) => new Date(c.openTime).getUTCDay() === 1)).toBe(true);
    expect(at(candles, '2020-03-30T00:00:00Z')).toEqual({
      openTime: t('2020-03-30T00:00:00Z'),
      open: 5880.5, // Mon 2020-03-30
      high: 7198,
      low: 5857.76,
      close: 6772.78, // Sun 2020-04-05
      volume: 664784.299583,
    });
    // history starts Thursday 2017-08-17: the partial week of 08-14 is dropped
    expect(formatTimestamp(candles[0]?.openTime ?? 0)).toBe('2017-08-21T00:00:00Z');
  });

  it('ETH-USDT 1M: whole months from days; September 2026 (19 days) is the forming month', async () => {
    const { candles } = await source.fetchCandles({
      symbol: 'ETH-USDT',
      timeframe: '1M',
      incompleteBucketPolicy: 'marked',
    });
    expect(formatTimestamp(candles[0]?.openTime ?? 0)).toBe('2017-09-01T00:00:00Z');
    expect(candles[0]).toMatchObject({ open: 386.44, high: 394.39, low: 192, close: 304.36 });
    // March 2026: the same values its hours aggregate to
    expect(at(candles, '2026-03-01T00:00:00Z')).toEqual({
      openTime: t('2026-03-01T00:00:00Z'),
      open: 1964.51,
      high: 2386.02,
      low: 1907.41,
      close: 2105.43,
      volume: 12656614.111,
    });
    expect(candles.at(-1)).toEqual({
      openTime: t('2026-09-01T00:00:00Z'),
      open: 2467.64,
      high: 2668,
      low: 2356.41,
      close: 2632.69,
      volume: 5886018.0343,
      complete: false,
    });
  });

  it('reproduces the contract examples (1M dropped, 1w marked, cut at asOf 2022-03-01T06:00:00Z)', async () => {
    const examples = join(__dirname, '../../../../contracts/examples');
    for (const file of ['ohlcv_export.example.json', 'ohlcv_export.1w-marked.example.json']) {
      const example = JSON.parse(readFileSync(join(examples, file), 'utf8')) as {
        symbol: string;
        timeframe: '1M' | '1w';
        asOf: string;
        candleCount: number;
        incompleteBucketPolicy: 'dropped' | 'marked';
        candles: Array<Record<string, unknown> & { openTime: string }>;
      };
      const series = await source.fetchCandles({
        symbol: example.symbol,
        timeframe: example.timeframe,
        asOf: t(example.asOf),
        limit: example.candleCount,
        incompleteBucketPolicy: example.incompleteBucketPolicy,
      });
      expect(series.candles.map((c) => ({ ...c, openTime: formatTimestamp(c.openTime) }))).toEqual(
        example.candles,
      );
    }
  });
});

describe('BundledCandleSource: how much history each series has (README numbers)', () => {
  it('whole candles per symbol and long timeframe', async () => {
    const count = async (symbol: string, timeframe: '1w' | '1M'): Promise<number> =>
      (await source.fetchCandles({ symbol, timeframe })).candles.length;
    for (const symbol of ['BTC-USDT', 'ETH-USDT']) {
      expect(await count(symbol, '1M')).toBe(108); // 2017-09 .. 2026-08
      expect(await count(symbol, '1w')).toBe(473); // 2017-08-21 .. 2026-09-07
    }
  });
});

describe('BundledCandleSource: windows', () => {
  it('limit keeps the newest candles', async () => {
    const all = await source.fetchCandles({ symbol: 'BTC-USDT', timeframe: '4h' });
    const last3 = await source.fetchCandles({ symbol: 'BTC-USDT', timeframe: '4h', limit: 3 });
    expect(last3.candles).toEqual(all.candles.slice(-3));
    const many = await source.fetchCandles({ symbol: 'BTC-USDT', timeframe: '1M', limit: 1000 });
    expect(many.candles.length).toBeLessThan(1000);
  });

  it('from/to select source rows; buckets cut by them are incomplete', async () => {
    const window = await source.fetchCandles({
      symbol: 'BTC-USDT',
      timeframe: '1w',
      from: t('2020-03-04T00:00:00Z'), // a Wednesday: the week of 03-02 is cut → dropped
      to: t('2020-04-01T00:00:00Z'), // a Wednesday: the week of 03-30 is cut → forming
      incompleteBucketPolicy: 'marked',
    });
    expect(window.candles.map((c) => [formatTimestamp(c.openTime), c.complete])).toEqual([
      ['2020-03-09T00:00:00Z', undefined],
      ['2020-03-16T00:00:00Z', undefined],
      ['2020-03-23T00:00:00Z', undefined],
      ['2020-03-30T00:00:00Z', false],
    ]);
    // the cut week holds 03-30 and 03-31 only
    expect(window.candles[3]).toMatchObject({ open: 5880.5, high: 6599, close: 6410.44 });
    const full = await source.fetchCandles({ symbol: 'BTC-USDT', timeframe: '1w' });
    expect(window.candles[3]?.close).not.toBe(at(full.candles, '2020-03-30T00:00:00Z').close);
  });

  it('returns no candles (not an error) for a window outside the data', async () => {
    const empty = await source.fetchCandles({
      symbol: 'BTC-USDT',
      timeframe: '1h',
      to: t('2020-01-01T00:00:00Z'),
    });
    expect(empty.candles).toEqual([]);
  });

  it('is deterministic', async () => {
    const request = { symbol: 'ETH-USDT', timeframe: '1w', limit: 10 } as const;
    const a = await source.fetchCandles(request);
    const b = await new BundledCandleSource().fetchCandles(request);
    expect(JSON.stringify(b)).toBe(JSON.stringify(a));
  });
});

describe('BundledCandleSource: errors name what is available', () => {
  it('unknown symbol → INVALID_STEP_INPUTS listing the symbols', async () => {
    const error = await rejectionOf(source.fetchCandles({ symbol: 'DOGE-USDT', timeframe: '1d' }));
    expect(error).toBeInstanceOf(UnknownSymbolError);
    expect(error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      retryable: false,
      message: "unknown symbol 'DOGE-USDT'; available: BTC-USDT, ETH-USDT",
      details: { symbol: 'DOGE-USDT', availableSymbols: ['BTC-USDT', 'ETH-USDT'] },
    });
    await expect(source.availableTimeframes('XRP')).rejects.toBeInstanceOf(UnknownSymbolError);
  });

  it('unsupported timeframe → INVALID_STEP_INPUTS listing that symbol’s timeframes', async () => {
    // every bundled symbol has every timeframe: a catalogue without hours shows the refusal
    const daily = new BundledCandleSource({
      catalogue: [
        {
          symbol: 'BTC-USDT',
          aliases: [],
          datasets: { '1d': 'binance/BTCUSDT_1d', '1w': 'binance/BTCUSDT_1d' },
        },
      ],
    });
    const error = await rejectionOf(daily.fetchCandles({ symbol: 'btc-usdt', timeframe: '4h' }));
    expect(error).toBeInstanceOf(UnsupportedTimeframeError);
    expect(error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      message: "timeframe '4h' is not available for 'btc-usdt'; available: 1d, 1w",
      details: { symbol: 'btc-usdt', timeframe: '4h', availableTimeframes: ['1d', '1w'] },
    });
  });

  it('rejects malformed requests', async () => {
    for (const bad of [
      { limit: 0 },
      { limit: 1.5 },
      { from: t('2020-02-01T00:00:00Z'), to: t('2020-01-01T00:00:00Z') },
      { from: Number.NaN },
    ]) {
      const error = await rejectionOf(
        source.fetchCandles({ symbol: 'BTC-USDT', timeframe: '1d', ...bad }),
      );
      expect(error).toBeInstanceOf(InvalidCandleRequestError);
      expect(error).toMatchObject({ code: 'INVALID_STEP_INPUTS' });
    }
  });

  it('a missing data directory is MARKET_DATA_UNAVAILABLE (not retryable) naming the file', async () => {
    const broken = new BundledCandleSource({ dataDir: '/nonexistent/tda-data' });
    const error = await rejectionOf(broken.fetchCandles({ symbol: 'BTC-USDT', timeframe: '1d' }));
    expect(error).toBeInstanceOf(MarketDataUnavailableError);
    expect(error).toMatchObject({
      code: 'MARKET_DATA_UNAVAILABLE',
      retryable: false,
      details: { dataset: 'binance/BTCUSDT_1d', file: 'BTCUSDT_1d.csv' },
      message: expect.stringContaining('/nonexistent/tda-data') as unknown,
    });
  });

  it('honours an aborted signal', async () => {
    const controller = new AbortController();
    controller.abort(new Error('cancelled'));
    await expect(
      source.fetchCandles({ symbol: 'BTC-USDT', timeframe: '1d', signal: controller.signal }),
    ).rejects.toThrow('cancelled');
  });

  it('finds the bundled data next to the sources', () => {
    expect(DEFAULT_BUNDLED_DATA_DIR.endsWith(join('libs', 'market-data', 'data'))).toBe(true);
  });
});
