import type { OhlcvCandle } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import {
  adxSeries,
  atrSeries,
  obvSeries,
  stochasticSeries,
  vwapSeries,
  type HlcvCandle,
} from './candle-indicators';
import { bollingerSeries, smaSeries } from './indicators';
import { btcUsdMonthly } from './testing';

/*
 * Every series against an independent reference: textbook implementations written here from the
 * definitions (Wilder's own running-sum form for ADX, not the averaged smoothing the code uses),
 * on 60 real monthly BTC bars, and small series checked by hand (exact fractions).
 */

/** |actual − expected| ≤ 1e-6 relative (1e-9 absolute near zero). */
function expectClose(actual: number | null | undefined, expected: number, what: string): void {
  expect(actual, what).not.toBeNull();
  expect(actual, what).toBeTypeOf('number');
  const error = Math.abs((actual ?? Number.NaN) - expected);
  expect(error, `${what}: ${actual} vs ${expected}`).toBeLessThanOrEqual(
    1e-6 * Math.abs(expected) + 1e-9,
  );
}

/** Compares a series with a reference, index by index: null exactly where the reference is. */
function expectSeries(
  actual: readonly (number | null)[],
  expected: readonly (number | null)[],
  what: string,
): void {
  expect(actual).toHaveLength(expected.length);
  expected.forEach((value, i) => {
    if (value === null) expect(actual[i], `${what}[${i}]`).toBeNull();
    else expectClose(actual[i], value, `${what}[${i}]`);
  });
}

const candles: readonly OhlcvCandle[] = btcUsdMonthly().candles;
const closes = candles.map((c) => c.close);

function trueRanges(bars: readonly HlcvCandle[]): number[] {
  return bars.map((c, i) => {
    const previous = bars[i - 1];
    if (previous === undefined) return c.high - c.low;
    return Math.max(
      c.high - c.low,
      Math.abs(c.high - previous.close),
      Math.abs(c.low - previous.close),
    );
  });
}

function referenceAtr(bars: readonly HlcvCandle[], period: number): (number | null)[] {
  const tr = trueRanges(bars);
  const out: (number | null)[] = [];
  let atr = 0;
  for (let i = 0; i < tr.length; i += 1) {
    if (i === period - 1) atr = tr.slice(0, period).reduce((a, b) => a + b) / period;
    if (i >= period) atr = (atr * (period - 1) + (tr[i] ?? 0)) / period;
    out.push(i < period - 1 ? null : atr);
  }
  return out;
}

function referenceSma(values: readonly number[], period: number): (number | null)[] {
  return values.map((_, i) =>
    i < period - 1 ? null : values.slice(i - period + 1, i + 1).reduce((a, b) => a + b) / period,
  );
}

function referenceStochastic(bars: readonly HlcvCandle[], k: number, d: number) {
  const fastK = bars.map((c, i) => {
    if (i < k - 1) return null;
    const window = bars.slice(i - k + 1, i + 1);
    const high = Math.max(...window.map((w) => w.high));
    const low = Math.min(...window.map((w) => w.low));
    return (100 * (c.close - low)) / (high - low);
  });
  const dLine = fastK.map((_, i) => {
    const window = fastK.slice(Math.max(0, i - d + 1), i + 1);
    if (i < k + d - 2 || window.some((v) => v === null)) return null;
    return (window as number[]).reduce((a, b) => a + b) / d;
  });
  return { k: fastK.map((v, i) => (dLine[i] === null ? null : v)), d: dLine };
}

/** Wilder (1978): 14-period running sums TR14, +DM14, −DM14 (sum − sum/14 + today), then ADX. */
function referenceAdx(bars: readonly HlcvCandle[], period: number) {
  const n = bars.length;
  const adx: (number | null)[] = Array<number | null>(n).fill(null);
  const plusDI: (number | null)[] = Array<number | null>(n).fill(null);
  const minusDI: (number | null)[] = Array<number | null>(n).fill(null);
  const tr = trueRanges(bars);
  let [sumTr, sumPlus, sumMinus, adxValue] = [0, 0, 0, 0];
  const dx: number[] = [];
  for (let i = 1; i < n; i += 1) {
    const [c, p] = [bars[i], bars[i - 1]] as [HlcvCandle, HlcvCandle];
    const up = c.high - p.high;
    const down = p.low - c.low;
    const [plus, minus] = [up > down && up > 0 ? up : 0, down > up && down > 0 ? down : 0];
    const keep = i <= period ? 1 : 1 - 1 / period;
    sumTr = sumTr * keep + (tr[i] ?? 0);
    sumPlus = sumPlus * keep + plus;
    sumMinus = sumMinus * keep + minus;
    if (i < period) continue;
    const [pdi, mdi] = [(100 * sumPlus) / sumTr, (100 * sumMinus) / sumTr];
    dx.push(pdi + mdi === 0 ? 0 : (100 * Math.abs(pdi - mdi)) / (pdi + mdi));
    if (dx.length < period) continue;
    adxValue =
      dx.length === period
        ? dx.reduce((a, b) => a + b) / period
        : (adxValue * (period - 1) + (dx.at(-1) ?? 0)) / period;
    [adx[i], plusDI[i], minusDI[i]] = [adxValue, pdi, mdi];
  }
  return { adx, plusDI, minusDI };
}

function referenceObv(bars: readonly HlcvCandle[]): number[] {
  let obv = 0;
  return bars.map((c, i) => {
    const previous = bars[i - 1];
    if (previous !== undefined && c.close > previous.close) obv += c.volume;
    if (previous !== undefined && c.close < previous.close) obv -= c.volume;
    return obv;
  });
}

function referenceVwap(bars: readonly HlcvCandle[]): number[] {
  let [priceVolume, volume] = [0, 0];
  return bars.map((c) => {
    priceVolume += ((c.high + c.low + c.close) / 3) * c.volume;
    volume += c.volume;
    return priceVolume / volume;
  });
}

/** Small hand-checked bars: [open, high, low, close, volume]. */
const HAND: readonly HlcvCandle[] = (
  [
    [10, 12, 9, 11, 100],
    [11, 13, 10, 12, 200],
    [12, 12.5, 10.5, 11, 150],
    [11, 14, 11, 13.5, 300],
    [13.5, 15, 12, 12.5, 250],
    [12.5, 13, 11, 11.5, 120],
    [11.5, 12, 10, 12, 180],
    [12, 16, 11.5, 15, 400],
  ] as const
).map(([open, high, low, close, volume]) => ({ open, high, low, close, volume }));

describe('atrSeries (Wilder, first TR = high − low)', () => {
  it('matches hand-checked values: TR 3,3,2,3,3,2,2,4.5 → 8/3, 25/9, 77/27, …', () => {
    expectSeries(
      atrSeries(HAND, 3),
      [null, null, 8 / 3, 25 / 9, 77 / 27, 208 / 81, 578 / 243, 3.0857338820301785],
      'ATR(3)',
    );
  });

  it('agrees with the reference on real monthly bars', () => {
    expectSeries(atrSeries(candles, 14), referenceAtr(candles, 14), 'ATR(14)');
  });
});

describe('smaSeries and bollingerSeries', () => {
  it('SMA matches the windowed mean (hand-checked and real closes)', () => {
    expectSeries(
      smaSeries(
        HAND.map((c) => c.close),
        3,
      ),
      [null, null, 34 / 3, 36.5 / 3, 37 / 3, 12.5, 12, 38.5 / 3],
      'SMA(3)',
    );
    expectSeries(smaSeries(closes, 20), referenceSma(closes, 20), 'SMA(20)');
  });

  it('Bollinger = SMA ± k × population standard deviation on real closes', () => {
    const bands = bollingerSeries(closes, 20, 2.5);
    const middle = referenceSma(closes, 20);
    bands.forEach((band, i) => {
      const mean = middle[i];
      if (mean === null || mean === undefined) return expect(band).toBeNull();
      const window = closes.slice(i - 19, i + 1);
      const sd = Math.sqrt(window.reduce((s, c) => s + (c - mean) ** 2, 0) / 20);
      expectClose(band?.middle, mean, `middle[${i}]`);
      expectClose(band?.upper, mean + 2.5 * sd, `upper[${i}]`);
      return expectClose(band?.lower, mean - 2.5 * sd, `lower[${i}]`);
    });
  });
});

describe('stochasticSeries (fast %K, %D = SMA of %K)', () => {
  it('matches hand-checked values', () => {
    const points = stochasticSeries(HAND, 3, 2);
    expectSeries(
      points.map((p) => p?.k ?? null),
      [null, null, null, 87.5, 400 / 9, 12.5, 40, 250 / 3],
      '%K',
    );
    expectSeries(
      points.map((p) => p?.d ?? null),
      [null, null, null, 68.75, 65.97222222222223, 28.47222222222222, 26.25, 61.666666666666664],
      '%D',
    );
  });

  it('agrees with the reference on real monthly bars', () => {
    const points = stochasticSeries(candles, 14, 3);
    const reference = referenceStochastic(candles, 14, 3);
    expectSeries(
      points.map((p) => p?.k ?? null),
      reference.k,
      '%K',
    );
    expectSeries(
      points.map((p) => p?.d ?? null),
      reference.d,
      '%D',
    );
  });
});

describe('adxSeries (Wilder)', () => {
  it('matches hand-checked values (period 2)', () => {
    const points = adxSeries(HAND, 2);
    expectSeries(
      points.map((p) => p?.adx ?? null),
      [null, null, null, 100, 100, 50, 50, 60],
      'ADX',
    );
    expectClose(points[7]?.plusDI, 63.2558139535, '+DI[7]');
    expectClose(points[7]?.minusDI, 11.1627906977, '−DI[7]');
  });

  it("agrees with Wilder's running-sum form on real monthly bars, +DI and −DI too", () => {
    const points = adxSeries(candles, 14);
    const reference = referenceAdx(candles, 14);
    expect(points.findIndex((p) => p !== null)).toBe(27);
    expectSeries(
      points.map((p) => p?.adx ?? null),
      reference.adx,
      'ADX',
    );
    expectSeries(
      points.map((p) => p?.plusDI ?? null),
      reference.plusDI,
      '+DI',
    );
    expectSeries(
      points.map((p) => p?.minusDI ?? null),
      reference.minusDI,
      '−DI',
    );
  });
});

describe('obvSeries and vwapSeries (cumulative from the first candle)', () => {
  it('match hand-checked values', () => {
    expectSeries(obvSeries(HAND), [0, 200, 50, 350, 100, -20, 160, 560], 'OBV');
    expectSeries(
      vwapSeries(HAND),
      [
        32 / 3,
        34 / 3,
        34 / 3,
        11.9333333333,
        12.2416666667,
        12.1979166667,
        12.0782051282,
        12.5696078431,
      ],
      'VWAP',
    );
  });

  it('agree with the references on real monthly bars', () => {
    expectSeries(obvSeries(candles), referenceObv(candles), 'OBV');
    expectSeries(vwapSeries(candles), referenceVwap(candles), 'VWAP');
  });

  it('VWAP: null before any volume, unchanged by a zero-volume candle', () => {
    const bars = [
      { open: 1, high: 2, low: 1, close: 1.5, volume: 0 },
      { open: 1, high: 3, low: 3, close: 3, volume: 2 },
      { open: 1, high: 9, low: 9, close: 9, volume: 0 },
    ];
    expect(vwapSeries(bars)).toEqual([null, 3, 3]);
  });
});
