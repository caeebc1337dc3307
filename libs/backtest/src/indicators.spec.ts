import { BollingerBands, EMA, MACD, RSI, SMA } from 'trading-signals';
import { describe, expect, it } from 'vitest';
import { toCandleArrays } from './candle-arrays';
import { IndicatorCache } from './indicator-cache';
import { bollingerArrays, emaArray, macdArrays, rsiArray, smaArray } from './indicators';
import { computeSignals } from './strategies';
import { HOUR_MS, loadBundledBtc1h } from './testing/bundled-candles';

const objects = loadBundledBtc1h();
const candles = toCandleArrays(objects, HOUR_MS);
const closes = objects.map((c) => c.close);
const nanIfNull = (v: number | null | undefined) => (v == null ? Number.NaN : v);

describe('indicator arrays are bit-identical to trading-signals (what @tda/charts draws)', () => {
  it.each([2, 9, 26, 200])('EMA and SMA %i', (period) => {
    const ema = new EMA(period);
    const sma = new SMA(period);
    expect(Array.from(emaArray(candles.close, period))).toEqual(
      closes.map((c) => {
        const v = ema.add(c);
        return ema.isStable ? v : Number.NaN;
      }),
    );
    expect(Array.from(smaArray(candles.close, period))).toEqual(
      closes.map((c) => nanIfNull(sma.add(c))),
    );
  });

  it.each([2, 14, 30])('RSI %i', (period) => {
    const rsi = new RSI(period);
    expect(Array.from(rsiArray(candles.close, period))).toEqual(
      closes.map((c) => nanIfNull(rsi.add(c))),
    );
  });

  it('Bollinger 20 × 2 and MACD 12/26/9', () => {
    const bb = new BollingerBands(20, 2);
    const expected = closes.map((c) => bb.add(c));
    const actual = bollingerArrays(candles.close, 20, 2);
    expect(Array.from(actual.upper)).toEqual(expected.map((b) => nanIfNull(b?.upper)));
    expect(Array.from(actual.lower)).toEqual(expected.map((b) => nanIfNull(b?.lower)));
    const macd = new MACD(new EMA(12), new EMA(26), new EMA(9));
    const points = closes.map((c) => macd.add(c));
    const { macd: line, signal } = macdArrays(candles.close, 12, 26, 9);
    expect(Array.from(line)).toEqual(points.map((p) => nanIfNull(p?.macd)));
    expect(signal[25 + 7]).toBeNaN();
    expect(signal[25 + 8]).toBe(points[25 + 8]?.signal);
    expect(signal[4000]).toBe(points[4000]?.signal);
  });

  it('refuses invalid periods with INVALID_REQUEST', () => {
    expect(() => emaArray(candles.close, 0)).toThrow(
      expect.objectContaining({ code: 'INVALID_REQUEST' }),
    );
    expect(() => macdArrays(candles.close, 26, 12, 9)).toThrow(/fast must be below slow/);
  });
});

describe('IndicatorCache', () => {
  it('computes each series once and shares it between variants', () => {
    const cache = new IndicatorCache(candles);
    const scratch = new Int8Array(candles.length);
    for (const fast of [5, 10, 20]) {
      for (const slow of [50, 100])
        computeSignals(cache, { kind: 'ma_cross', ma: 'ema', fast, slow }, scratch);
    }
    expect(cache.size).toBe(5);
    expect(cache.ema(10)).toBe(cache.ema(10));
    expect(cache.bollinger(20, 2)).toBe(cache.bollinger(20, 2));
    expect(cache.bollinger(20, 2.5)).not.toBe(cache.bollinger(20, 2));
  });
});
