import { BacktestParamsInvalidError } from './backtest.errors';

/*
 * Indicator series over closes as Float64Array, aligned with the bars, NaN while warming up. The
 * arithmetic follows trading-signals 8 (the library behind @tda/charts) operation by operation, so
 * the values are bit-identical to it and a crossover decided here is the one a chart shows.
 */

export interface BollingerArrays {
  middle: Float64Array;
  upper: Float64Array;
  lower: Float64Array;
}

export interface MacdArrays {
  macd: Float64Array;
  signal: Float64Array;
}

function assertPeriod(name: string, period: number, min = 1): void {
  if (!Number.isInteger(period) || period < min) {
    throw new BacktestParamsInvalidError(`${name} period must be an integer >= ${min}`, {
      [name]: period,
    });
  }
}

/** EMA seeded with the first value, every bar (MACD needs the not-yet-stable values too). */
function emaRaw(values: Float64Array, from: number, period: number): Float64Array {
  const out = new Float64Array(values.length).fill(Number.NaN);
  const k = 2 / (period + 1);
  let previous = values[from] ?? Number.NaN;
  for (let i = from; i < values.length; i++) {
    const value = (values[i] as number) * k + previous * (1 - k);
    out[i] = value;
    previous = value;
  }
  return out;
}

/** Exponential moving average; NaN for the first period-1 bars. */
export function emaArray(close: Float64Array, period: number): Float64Array {
  assertPeriod('ema', period);
  return emaRaw(close, 0, period).fill(Number.NaN, 0, Math.min(period - 1, close.length));
}

/** Simple moving average, summed per window in order (no rolling sum: no drift, same bits). */
export function smaArray(close: Float64Array, period: number): Float64Array {
  assertPeriod('sma', period);
  const out = new Float64Array(close.length).fill(Number.NaN);
  for (let i = period - 1; i < close.length; i++) {
    let sum = 0;
    for (let j = i - period + 1; j <= i; j++) sum += close[j] as number;
    out[i] = sum / period;
  }
  return out;
}

/** Bollinger bands: SMA ± k × population standard deviation of the window. */
export function bollingerArrays(close: Float64Array, period: number, k: number): BollingerArrays {
  assertPeriod('bollinger', period);
  if (!(k > 0)) throw new BacktestParamsInvalidError('bollinger k must be positive', { k });
  const middle = smaArray(close, period);
  const upper = new Float64Array(close.length).fill(Number.NaN);
  const lower = new Float64Array(close.length).fill(Number.NaN);
  for (let i = period - 1; i < close.length; i++) {
    const mean = middle[i] as number;
    let squares = 0;
    for (let j = i - period + 1; j <= i; j++) {
      const d = (close[j] as number) - mean;
      squares += d * d;
    }
    const sd = Math.sqrt(squares / period);
    upper[i] = mean + sd * k;
    lower[i] = mean - sd * k;
  }
  return { middle, upper, lower };
}

/** Wilder's RSI (0..100): SMA seed of the first `period` gains/losses, then 1/period smoothing. */
export function rsiArray(close: Float64Array, period: number): Float64Array {
  assertPeriod('rsi', period, 2);
  const out = new Float64Array(close.length).fill(Number.NaN);
  let gainSum = 0;
  let lossSum = 0;
  let avgGain = 0;
  let avgLoss = 0;
  for (let i = 1; i < close.length; i++) {
    const change = (close[i] as number) - (close[i - 1] as number);
    const gain = change > 0 ? change : 0;
    const loss = change > 0 ? 0 : -change;
    if (i < period) {
      gainSum += gain;
      lossSum += loss;
      continue;
    }
    if (i === period) {
      avgGain = (gainSum + gain) / period;
      avgLoss = (lossSum + loss) / period;
    } else {
      avgGain = (gain - avgGain) * (1 / period) + avgGain;
      avgLoss = (loss - avgLoss) * (1 / period) + avgLoss;
    }
    out[i] = avgLoss === 0 ? 100 : 100 - 100 / (avgGain / avgLoss + 1);
  }
  return out;
}

/** MACD line (fast EMA − slow EMA, from bar slow-1) and its signal EMA (NaN until stable). */
export function macdArrays(
  close: Float64Array,
  fast: number,
  slow: number,
  signal: number,
): MacdArrays {
  assertPeriod('macd_fast', fast);
  assertPeriod('macd_slow', slow);
  assertPeriod('macd_signal', signal);
  if (fast >= slow)
    throw new BacktestParamsInvalidError('macd fast must be below slow', { fast, slow });
  const fastEma = emaRaw(close, 0, fast);
  const slowEma = emaRaw(close, 0, slow);
  const macd = new Float64Array(close.length).fill(Number.NaN);
  for (let i = slow - 1; i < close.length; i++) {
    macd[i] = (fastEma[i] as number) - (slowEma[i] as number);
  }
  const stableFrom = Math.min(slow - 1 + signal - 1, close.length);
  const signalLine = emaRaw(macd, slow - 1, signal).fill(Number.NaN, 0, stableFrom);
  return { macd, signal: signalLine };
}
