import { ATR, getTrueRange, OBV, StochasticOscillator, VWAP, WSMA } from 'trading-signals';
import type { IndicatorSeries } from './indicators';

/*
 * Indicators of whole candles (high, low, close, volume), aligned with their input like the close
 * series of indicators.ts: `result[i]` belongs to `candles[i]`, null while warming up. The maths
 * is trading-signals'; where its class departs from the textbook definition (ADX), the indicator
 * is assembled from its Wilder smoothing instead, and the doc comment says so.
 */

export interface HlcCandle {
  high: number;
  low: number;
  close: number;
}

export interface HlcvCandle extends HlcCandle {
  open: number;
  volume: number;
}

export interface StochasticPoint {
  k: number;
  d: number;
}

export interface AdxPoint {
  adx: number;
  plusDI: number;
  minusDI: number;
}

function assertPeriod(name: string, period: number): void {
  if (!Number.isInteger(period) || period < 1) {
    throw new RangeError(`${name} period must be a positive integer, got ${period}`);
  }
}

/**
 * Average True Range with Wilder's smoothing: the SMA of the first `period` true ranges, then
 * ATR = (ATR₋₁ × (period − 1) + TR) / period. The first bar's true range is high − low (it has no
 * previous close), as in TradingView and StockCharts. First value at index period − 1.
 */
export function atrSeries(candles: readonly HlcCandle[], period: number): IndicatorSeries {
  assertPeriod('ATR', period);
  const atr = new ATR(period);
  return candles.map((candle) => atr.add(candle));
}

/**
 * Fast stochastic oscillator: %K = 100 × (close − lowest low) / (highest high − lowest low) over
 * the last `kPeriod` bars (0 when that range is flat), %D = SMA(dPeriod) of %K. A point exists
 * once %D does: from index kPeriod + dPeriod − 2.
 */
export function stochasticSeries(
  candles: readonly HlcCandle[],
  kPeriod: number,
  dPeriod: number,
): (StochasticPoint | null)[] {
  assertPeriod('Stochastic k', kPeriod);
  assertPeriod('Stochastic d', dPeriod);
  const stochastic = new StochasticOscillator({ kPeriod, kSlowingPeriod: 1, dPeriod });
  return candles.map((candle) => {
    const value = stochastic.add(candle);
    return value === null ? null : { k: value.stochK, d: value.stochD };
  });
}

/**
 * Wilder's ADX with +DI and −DI. From the second bar: TR, +DM (the high's rise when it beats the
 * low's fall and is positive, else 0) and −DM (the mirror); each smoothed with Wilder's smoothing
 * (the SMA of its first `period` values, then x₋₁ + (x − x₋₁) / period); ±DI = 100 × DM / TR;
 * DX = 100 × |+DI − −DI| / (+DI + −DI) (0 when both are 0); ADX = the same smoothing of DX. First
 * value at index 2 × period − 1. trading-signals' ADX class also feeds the first bar (TR = high −
 * low, zero DM) into the smoothing, which moves the warm-up values off the textbook ones: its
 * Wilder smoothing (WSMA) is used here instead.
 */
export function adxSeries(candles: readonly HlcCandle[], period: number): (AdxPoint | null)[] {
  assertPeriod('ADX', period);
  const trueRange = new WSMA(period);
  const plusDM = new WSMA(period);
  const minusDM = new WSMA(period);
  const adx = new WSMA(period);
  return candles.map((candle, index) => {
    const previous = candles[index - 1];
    if (previous === undefined) return null;
    const up = candle.high - previous.high;
    const down = previous.low - candle.low;
    const tr = trueRange.add(getTrueRange(candle, previous.close));
    const plus = plusDM.add(up > down && up > 0 ? up : 0);
    const minus = minusDM.add(down > up && down > 0 ? down : 0);
    if (tr === null || plus === null || minus === null) return null;
    const plusDI = tr === 0 ? 0 : (100 * plus) / tr;
    const minusDI = tr === 0 ? 0 : (100 * minus) / tr;
    const sum = plusDI + minusDI;
    const value = adx.add(sum === 0 ? 0 : (100 * Math.abs(plusDI - minusDI)) / sum);
    return value === null ? null : { adx: value, plusDI, minusDI };
  });
}

/**
 * On-balance volume, cumulative from the first candle of the series (0 there): + volume on a
 * higher close, − volume on a lower one, unchanged on an equal close. Its level depends on where
 * the series starts; its slope and divergences are what it says.
 */
export function obvSeries(candles: readonly HlcvCandle[]): IndicatorSeries {
  // OBV(2): the class keeps two candles, the previous close being all OBV needs.
  const obv = new OBV(2);
  return candles.map((candle) => obv.add(candle) ?? 0);
}

/**
 * Volume-weighted average price anchored at the first candle of the series: Σ typical price ×
 * volume / Σ volume, typical price = (high + low + close) / 3. Null until a candle has volume; a
 * zero-volume candle leaves it unchanged.
 */
export function vwapSeries(candles: readonly HlcvCandle[]): IndicatorSeries {
  const vwap = new VWAP();
  let last: number | null = null;
  return candles.map((candle) => {
    last = vwap.add(candle) ?? last;
    return last;
  });
}
