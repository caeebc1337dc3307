import { TdaError, TIMEFRAMES } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import { assertAsOfCovered, formatAsOf, isAsOfCovered, parseAsOf, resolveAsOf } from './as-of';
import { BundledCandleSource } from './bundled/bundled-candle.source';
import type { DataCoverage } from './candle-source.port';
import { AsOfOutOfRangeError, InvalidAsOfError, MarketDataError } from './market-data.errors';

const t = (iso: string): number => Date.parse(iso);

const DAILY: DataCoverage = {
  symbol: 'BTC-USDT',
  timeframe: '1w',
  from: t('2017-08-17T00:00:00Z'),
  to: t('2026-09-20T00:00:00Z'),
  source: 'bundled dataset binance/BTCUSDT_1d',
};
const HOURLY: DataCoverage = {
  symbol: 'BTC-USDT',
  timeframe: '1h',
  from: t('2026-02-24T04:00:00Z'),
  to: t('2026-09-20T11:00:00Z'),
  source: 'bundled dataset binance/BTCUSDT_1h',
};
const LIVE: DataCoverage = {
  symbol: 'BTC/USDT',
  timeframe: '1d',
  from: null,
  to: t('2026-11-21T08:00:00Z'),
  source: 'exchange binance',
};

describe('resolveAsOf: the default', () => {
  it('is 2026-09-20T00:00:00Z for every timeframe of both bundled symbols', async () => {
    const source = new BundledCandleSource();
    const coverages: DataCoverage[] = [];
    for (const symbol of await source.listSymbols()) {
      for (const timeframe of TIMEFRAMES) coverages.push(await source.coverage(symbol, timeframe));
    }
    expect(coverages).toHaveLength(10);
    expect(formatAsOf(resolveAsOf(coverages))).toBe('2026-09-20T00:00:00Z');
    // each pair of timeframes alone agrees too: the daily files end where the hourly days do
    expect(formatAsOf(resolveAsOf(coverages.filter((c) => c.timeframe === '1M')))).toBe(
      '2026-09-20T00:00:00Z',
    );
    expect(formatAsOf(resolveAsOf(coverages.filter((c) => c.timeframe === '1h')))).toBe(
      '2026-09-20T11:00:00Z',
    );
  });

  it('is the earliest `to` (the newest moment every timeframe has complete data for)', () => {
    expect(resolveAsOf([HOURLY, DAILY])).toBe(DAILY.to);
    expect(resolveAsOf([LIVE])).toBe(LIVE.to);
  });

  it('refuses timeframes that do not overlap (the old Yahoo 1w/1M next to 2026 hours)', () => {
    const yahoo: DataCoverage = {
      ...DAILY,
      from: t('2014-09-17T00:00:00Z'),
      to: t('2022-03-02T00:00:00Z'),
      source: 'bundled dataset yahoo/BTC-USD_1d',
    };
    expect(() => resolveAsOf([yahoo, HOURLY])).toThrow(
      'asOf 2022-03-02T00:00:00Z is outside the 1h data of BTC-USDT (bundled dataset binance/BTCUSDT_1h): ' +
        'asOf must be after 2026-02-24T04:00:00Z and at most 2026-09-20T11:00:00Z',
    );
  });

  it('needs at least one coverage', () => {
    expect(() => resolveAsOf([])).toThrow(MarketDataError);
  });
});

describe('resolveAsOf: a requested asOf', () => {
  it('is kept when every coverage has from < asOf <= to', () => {
    const asOf = t('2026-06-15T13:00:00Z');
    expect(resolveAsOf([HOURLY, DAILY], asOf)).toBe(asOf);
    // the upper bound is inclusive: data exists for [from, to)
    expect(resolveAsOf([HOURLY, DAILY], DAILY.to)).toBe(DAILY.to);
    // a live source has no lower bound
    expect(resolveAsOf([LIVE], t('2001-01-01T00:00:00Z'))).toBe(t('2001-01-01T00:00:00Z'));
  });

  it('after the newest complete data → AsOfOutOfRangeError naming the timeframe and range', () => {
    const error = captured(() => resolveAsOf([HOURLY, DAILY], t('2026-09-20T06:00:00Z')));
    expect(error).toBeInstanceOf(AsOfOutOfRangeError);
    expect(error).toBeInstanceOf(MarketDataError);
    expect(error).toBeInstanceOf(TdaError);
    expect(error).toMatchObject({
      code: 'INVALID_REQUEST',
      retryable: false,
      message:
        'asOf 2026-09-20T06:00:00Z is outside the 1w data of BTC-USDT (bundled dataset binance/BTCUSDT_1d): ' +
        'asOf must be after 2017-08-17T00:00:00Z and at most 2026-09-20T00:00:00Z',
    });
    expect((error as AsOfOutOfRangeError).details).toEqual({
      field: 'scope.asOf',
      asOf: '2026-09-20T06:00:00Z',
      timeframe: '1w',
      symbol: 'BTC-USDT',
      available: { from: '2017-08-17T00:00:00Z', to: '2026-09-20T00:00:00Z' },
      source: 'bundled dataset binance/BTCUSDT_1d',
    });
  });

  it('at or before the first data → refused (the lower bound is exclusive)', () => {
    for (const asOf of [HOURLY.from ?? 0, t('2026-01-01T00:00:00Z')]) {
      const error = captured(() => resolveAsOf([DAILY, HOURLY], asOf));
      expect(error).toBeInstanceOf(AsOfOutOfRangeError);
      expect(error).toMatchObject({ details: { timeframe: '1h', asOf: formatAsOf(asOf) } });
    }
  });

  it('a live source: only the upper bound, and the message says so', () => {
    const error = captured(() => resolveAsOf([LIVE], t('2026-11-21T09:00:00Z')));
    expect(error).toMatchObject({
      code: 'INVALID_REQUEST',
      message:
        'asOf 2026-11-21T09:00:00Z is outside the 1d data of BTC/USDT (exchange binance): asOf must be at most 2026-11-21T08:00:00Z',
      details: {
        available: { from: null, to: '2026-11-21T08:00:00Z' },
        source: 'exchange binance',
      },
    });
  });

  it('not a number → InvalidAsOfError (INVALID_REQUEST)', () => {
    const error = captured(() => resolveAsOf([LIVE], Number.NaN));
    expect(error).toBeInstanceOf(InvalidAsOfError);
    expect(error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'scope.asOf' } });
  });

  it('isAsOfCovered / assertAsOfCovered state the same rule', () => {
    expect(isAsOfCovered(HOURLY, HOURLY.to)).toBe(true);
    expect(isAsOfCovered(HOURLY, HOURLY.to + 1)).toBe(false);
    expect(isAsOfCovered(HOURLY, HOURLY.from ?? 0)).toBe(false);
    expect(() => assertAsOfCovered(HOURLY, HOURLY.to + 1)).toThrow(AsOfOutOfRangeError);
    expect(() => assertAsOfCovered(HOURLY, HOURLY.to)).not.toThrow();
  });
});

describe('parseAsOf / formatAsOf (RFC 3339)', () => {
  it('reads UTC, fractions and offsets', () => {
    expect(parseAsOf('2026-09-20T00:00:00Z')).toBe(t('2026-09-20T00:00:00Z'));
    expect(parseAsOf('2026-09-20t00:00:00z')).toBe(t('2026-09-20T00:00:00Z'));
    expect(parseAsOf('2026-09-20T00:00:00.250Z')).toBe(t('2026-09-20T00:00:00.250Z'));
    expect(parseAsOf('2026-09-20T00:00:00.123456789Z')).toBe(t('2026-09-20T00:00:00.123Z'));
    expect(parseAsOf('2026-09-20T02:00:00+02:00')).toBe(t('2026-09-20T00:00:00Z'));
    expect(parseAsOf('2026-09-19T19:30:00-04:30')).toBe(t('2026-09-20T00:00:00Z'));
    expect(parseAsOf('2024-02-29T00:00:00Z')).toBe(t('2024-02-29T00:00:00Z'));
  });

  it('refuses anything else with INVALID_REQUEST naming scope.asOf', () => {
    for (const bad of [
      '',
      '2026-09-20',
      '2026-09-20 00:00:00Z',
      '2026-09-20T00:00:00',
      '2026-02-30T00:00:00Z',
      '2026-02-29T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-09-20T24:00:00Z',
      '2026-09-20T00:60:00Z',
      '2026-09-20T00:00:60Z',
      '2026-09-20T00:00:00+24:00',
      '0050-01-01T00:00:00Z',
      'yesterday',
    ]) {
      const error = captured(() => parseAsOf(bad));
      expect(error, bad).toBeInstanceOf(InvalidAsOfError);
      expect(error).toMatchObject({
        code: 'INVALID_REQUEST',
        retryable: false,
        details: { field: 'scope.asOf', asOf: bad },
      });
    }
  });

  it('formats epoch ms as the contracts write timestamps', () => {
    expect(formatAsOf(t('2026-09-20T00:00:00Z'))).toBe('2026-09-20T00:00:00Z');
    expect(formatAsOf(t('2026-09-20T00:00:00.5Z'))).toBe('2026-09-20T00:00:00.500Z');
    expect(parseAsOf(formatAsOf(1789862400000))).toBe(1789862400000);
  });
});

function captured(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}
