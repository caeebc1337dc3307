import { describe, expect, it } from 'vitest';
import { bollingerSeries, emaSeries, lastValue, macdSeries, rsiSeries } from './indicators';
import { btcUsdMonthly } from './testing';

/** Straightforward reference implementations, written from the textbook definitions. */
function referenceEma(closes: readonly number[], period: number): number[] {
  const k = 2 / (period + 1);
  const out: number[] = [];
  closes.forEach((close, i) =>
    out.push(i === 0 ? close : close * k + (out[i - 1] ?? close) * (1 - k)),
  );
  return out;
}

function referenceWilderRsi(closes: readonly number[], period: number): (number | null)[] {
  const out: (number | null)[] = [null];
  let avgGain = 0;
  let avgLoss = 0;
  for (let i = 1; i < closes.length; i += 1) {
    const change = (closes[i] ?? 0) - (closes[i - 1] ?? 0);
    const gain = Math.max(change, 0);
    const loss = Math.max(-change, 0);
    if (i <= period) {
      avgGain += gain / period;
      avgLoss += loss / period;
      out.push(i === period ? 100 - 100 / (1 + avgGain / avgLoss) : null);
    } else {
      avgGain = (avgGain * (period - 1) + gain) / period;
      avgLoss = (avgLoss * (period - 1) + loss) / period;
      out.push(100 - 100 / (1 + avgGain / avgLoss));
    }
  }
  return out;
}

describe('emaSeries', () => {
  it('matches hand-computed values and hides the warm-up', () => {
    // k = 0.5, seeded with the first close: 1, 1.5, 2.25, 3.125, 4.0625
    const ema = emaSeries([1, 2, 3, 4, 5], 3);
    expect(ema.slice(0, 2)).toEqual([null, null]);
    expect(ema[2]).toBeCloseTo(2.25, 10);
    expect(ema[3]).toBeCloseTo(3.125, 10);
    expect(ema[4]).toBeCloseTo(4.0625, 10);
  });

  it('agrees with the reference EMA on 60 real monthly closes', () => {
    const closes = btcUsdMonthly().candles.map((c) => c.close);
    const reference = referenceEma(closes, 20);
    const ema = emaSeries(closes, 20);
    expect(ema.filter((v) => v === null)).toHaveLength(19);
    ema.forEach((value, i) => {
      if (value !== null) expect(value).toBeCloseTo(reference[i] ?? Number.NaN, 6);
    });
    expect(lastValue(ema)).toBeCloseTo(37_872, -1);
  });

  it('rejects a non-positive period', () => {
    expect(() => emaSeries([1, 2], 0)).toThrow(RangeError);
  });
});

describe('bollingerSeries', () => {
  it('uses the SMA and the population standard deviation', () => {
    const bands = bollingerSeries([1, 2, 3, 4], 3, 2);
    expect(bands.slice(0, 2)).toEqual([null, null]);
    const sd = Math.sqrt(2 / 3);
    expect(bands[2]?.middle).toBeCloseTo(2, 10);
    expect(bands[2]?.upper).toBeCloseTo(2 + 2 * sd, 10);
    expect(bands[2]?.lower).toBeCloseTo(2 - 2 * sd, 10);
    expect(bands[3]?.middle).toBeCloseTo(3, 10);
  });
});

describe('rsiSeries', () => {
  it('matches hand-computed Wilder RSI', () => {
    // gains 1,1,0,2,0 / losses 0,0,1,0,1; SMA seed over 3 then Wilder smoothing
    const rsi = rsiSeries([10, 11, 12, 11, 13, 12], 3);
    expect(rsi.slice(0, 3)).toEqual([null, null, null]);
    expect(rsi[3]).toBeCloseTo(66.6667, 3);
    expect(rsi[4]).toBeCloseTo(83.3333, 3);
    expect(rsi[5]).toBeCloseTo(60.6061, 3);
  });

  it('agrees with the reference Wilder RSI on real closes', () => {
    const closes = btcUsdMonthly().candles.map((c) => c.close);
    const reference = referenceWilderRsi(closes, 14);
    const rsi = rsiSeries(closes, 14);
    rsi.forEach((value, i) => {
      const expected = reference[i];
      if (expected === null || expected === undefined) expect(value).toBeNull();
      else expect(value).toBeCloseTo(expected, 6);
    });
    expect(lastValue(rsi)).toBeCloseTo(56.2, 1);
  });
});

describe('macdSeries', () => {
  it('matches hand-computed MACD(2,3,2)', () => {
    const macd = macdSeries([1, 2, 3, 4, 5], 2, 3, 2);
    expect(macd.slice(0, 2)).toEqual([null, null]);
    expect(macd[2]?.macd).toBeCloseTo(0.305556, 5);
    expect(macd[2]?.signal).toBeNull();
    expect(macd[3]?.macd).toBeCloseTo(0.393519, 5);
    expect(macd[3]?.signal).toBeCloseTo(0.364198, 5);
    expect(macd[3]?.histogram).toBeCloseTo(0.029321, 5);
    expect(macd[4]?.histogram).toBeCloseTo(0.026491, 5);
  });

  it('is the difference of the reference EMAs on real closes', () => {
    const closes = btcUsdMonthly().candles.map((c) => c.close);
    const fast = referenceEma(closes, 12);
    const slow = referenceEma(closes, 26);
    const macd = macdSeries(closes, 12, 26, 9);
    expect(macd.findIndex((p) => p !== null)).toBe(25);
    expect(macd.findIndex((p) => p?.signal != null)).toBe(33);
    const last = macd[macd.length - 1];
    expect(last?.macd).toBeCloseTo((fast.at(-1) ?? 0) - (slow.at(-1) ?? 0), 6);
    expect(last?.histogram).toBeLessThan(0);
  });

  it('rejects fast >= slow', () => {
    expect(() => macdSeries([1, 2, 3], 26, 12, 9)).toThrow(/fast/);
  });
});
