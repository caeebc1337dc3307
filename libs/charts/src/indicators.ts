import { BollingerBands, EMA, MACD, RSI, SMA } from 'trading-signals';

/*
 * Indicator series aligned with their input: `result[i]` belongs to `closes[i]`, null while the
 * indicator is still warming up (not enough bars yet), so a chart draws nothing there instead of a
 * misleading seed value. The maths is trading-signals' (plain-number classes in v8); this module
 * only adapts it to whole series.
 */

export type IndicatorSeries = (number | null)[];

export interface BollingerPoint {
  upper: number;
  middle: number;
  lower: number;
}

export interface MacdPoint {
  macd: number;
  /** null until the signal EMA has seen `signal` MACD values. */
  signal: number | null;
  histogram: number | null;
}

function assertPeriod(name: string, period: number): void {
  if (!Number.isInteger(period) || period < 1) {
    throw new RangeError(`${name} period must be a positive integer, got ${period}`);
  }
}

/** Exponential moving average, seeded with the first close; null for the first period-1 bars. */
export function emaSeries(closes: readonly number[], period: number): IndicatorSeries {
  assertPeriod('EMA', period);
  const ema = new EMA(period);
  return closes.map((close) => {
    const value = ema.add(close);
    return ema.isStable ? value : null;
  });
}

/** Simple moving average: the mean of the last `period` closes; null for the first period-1 bars. */
export function smaSeries(closes: readonly number[], period: number): IndicatorSeries {
  assertPeriod('SMA', period);
  const sma = new SMA(period);
  return closes.map((close) => sma.add(close));
}

/** Bollinger bands (SMA ± multiplier × population standard deviation). */
export function bollingerSeries(
  closes: readonly number[],
  period: number,
  multiplier: number,
): (BollingerPoint | null)[] {
  assertPeriod('Bollinger', period);
  const bands = new BollingerBands(period, multiplier);
  return closes.map((close) => {
    const value = bands.add(close);
    return value === null ? null : { upper: value.upper, middle: value.middle, lower: value.lower };
  });
}

/** Wilder's RSI (0..100); the first value is at index `period`. */
export function rsiSeries(closes: readonly number[], period: number): IndicatorSeries {
  assertPeriod('RSI', period);
  const rsi = new RSI(period);
  return closes.map((close) => rsi.add(close));
}

/** MACD(fast, slow, signal) with EMAs; MACD from index slow-1, signal/histogram later. */
export function macdSeries(
  closes: readonly number[],
  fast: number,
  slow: number,
  signal: number,
): (MacdPoint | null)[] {
  assertPeriod('MACD fast', fast);
  assertPeriod('MACD slow', slow);
  assertPeriod('MACD signal', signal);
  if (fast >= slow) throw new RangeError(`MACD fast (${fast}) must be below slow (${slow})`);
  const macd = new MACD(new EMA(fast), new EMA(slow), new EMA(signal));
  return closes.map((close) => {
    const value = macd.add(close);
    if (value === null) return null;
    const stable = macd.signal.isStable;
    return {
      macd: value.macd,
      signal: stable ? value.signal : null,
      histogram: stable ? value.histogram : null,
    };
  });
}

/** The last non-null value of a series (the reading a description quotes). */
export function lastValue<T>(series: readonly (T | null)[]): T | null {
  for (let i = series.length - 1; i >= 0; i -= 1) {
    const value = series[i];
    if (value !== null && value !== undefined) return value;
  }
  return null;
}
