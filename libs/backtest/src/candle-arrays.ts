import { BacktestParamsInvalidError } from './backtest.errors';

/**
 * The fields of a candle the engine reads. Structural on purpose: `Candle` of @tda/market-data
 * satisfies it, yet this pure library does not depend on the adapter library.
 */
export interface CandleLike {
  openTime: number;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
}

/** Candles as columns: the kernel loops over typed arrays, never over objects. */
export interface CandleArrays {
  length: number;
  /** Duration of one bar in ms (annualizes the Sharpe ratio). */
  barMs: number;
  openTime: Float64Array;
  open: Float64Array;
  high: Float64Array;
  low: Float64Array;
  close: Float64Array;
  volume: Float64Array;
}

/** 365 days: crypto markets trade around the clock, so every bar of the year counts. */
export const YEAR_MS = 365 * 24 * 3_600_000;

/** Copies ascending candles into columns, once per dataset; every variant then shares them. */
export function toCandleArrays(candles: readonly CandleLike[], barMs: number): CandleArrays {
  if (!(barMs > 0)) throw new BacktestParamsInvalidError('barMs must be positive', { barMs });
  const n = candles.length;
  const arrays: CandleArrays = {
    length: n,
    barMs,
    openTime: new Float64Array(n),
    open: new Float64Array(n),
    high: new Float64Array(n),
    low: new Float64Array(n),
    close: new Float64Array(n),
    volume: new Float64Array(n),
  };
  candles.forEach((c, i) => {
    arrays.openTime[i] = c.openTime;
    arrays.open[i] = c.open;
    arrays.high[i] = c.high;
    arrays.low[i] = c.low;
    arrays.close[i] = c.close;
    arrays.volume[i] = c.volume;
  });
  return arrays;
}

/** Bars per year of the series' timeframe (8760 for 1h): the Sharpe annualization factor. */
export function barsPerYear(candles: Pick<CandleArrays, 'barMs'>): number {
  return YEAR_MS / candles.barMs;
}
