import { BacktestParamsInvalidError } from './backtest.errors';
import { barsPerYear, type CandleArrays } from './candle-arrays';
import { Book, type Rates } from './book';
import type { SignalArray } from './strategies';

/** The risk/execution part of a variant (stage B of a grid). Percentages are in percent (2 = 2%). */
export interface ExecutionParams {
  direction: 'long_only' | 'long_short';
  /** Fraction of current equity committed to each position, in (0, 1]. */
  fraction: number;
  /** Fee per side in basis points of the filled notional. */
  feeBps: number;
  /** Slippage per fill in basis points, always against the trader. */
  slippageBps: number;
  /** 0 = off. */
  stopLossPct: number;
  takeProfitPct: number;
  trailingStopPct: number;
}

export type ExitReason = 'signal' | 'stop' | 'take_profit' | 'trailing' | 'end';

export interface Trade {
  side: 'long' | 'short';
  entryTime: number;
  entryPrice: number;
  exitTime: number;
  exitPrice: number;
  /** Net of both fees and slippage, in equity units (the run starts with equity 1). */
  pnl: number;
  reason: ExitReason;
}

export interface VariantMetrics {
  total_return_pct: number;
  /** Closed round trips. */
  trades: number;
  max_drawdown_pct: number;
  sharpe: number;
  win_rate_pct: number;
  /** Gross profit / gross loss; null when no trade lost (the ratio is undefined). */
  profit_factor: number | null;
  exposure_pct: number;
}

export interface DetailedResult {
  metrics: VariantMetrics;
  trades: Trade[];
}

export function assertExecutionParams(p: ExecutionParams): void {
  const bad =
    !(p.fraction > 0 && p.fraction <= 1) ||
    !(p.feeBps >= 0) ||
    !(p.slippageBps >= 0) ||
    !(p.stopLossPct >= 0 && p.stopLossPct < 100) ||
    !(p.takeProfitPct >= 0) ||
    !(p.trailingStopPct >= 0 && p.trailingStopPct < 100);
  if (bad) throw new BacktestParamsInvalidError('execution parameters out of range', { ...p });
}

function ratesOf(p: ExecutionParams): Rates {
  return {
    longShort: p.direction === 'long_short',
    fraction: p.fraction,
    fee: p.feeBps / 10_000,
    slip: p.slippageBps / 10_000,
    stop: p.stopLossPct / 100,
    target: p.takeProfitPct / 100,
    trail: p.trailingStopPct / 100,
  };
}

export interface SimulateOptions {
  /** Also return the trades list (the finalizing scorer); the ranking loop leaves it off. */
  detailed?: boolean;
}

/**
 * Runs one variant over the candles. Bar i: fill the signal of bar i-1 at bar i's open (a signal
 * is known only at its bar's close: no look-ahead), then check stops/targets on bar i's range, then
 * mark to the close. An open position is closed at the last close (reason `end`, with costs).
 *
 * Metrics, streamed without an equity array: drawdown over the close-to-close equity curve; Sharpe
 * = mean / sample stdev of per-bar returns × √(bars per year of the timeframe, 365-day year);
 * exposure = bars holding a position at their close (before the `end` exit) / all bars.
 */
export function simulateVariant(
  candles: CandleArrays,
  signals: SignalArray,
  params: ExecutionParams,
  options: SimulateOptions = {},
): DetailedResult {
  assertExecutionParams(params);
  const n = candles.length;
  if (signals.length !== n)
    throw new BacktestParamsInvalidError('signals length differs from the candles');
  const trades: Trade[] = [];
  const book = new Book(ratesOf(params), options.detailed === true ? trades : undefined);
  const { openTime, open, high, low, close } = candles;
  const stats = { previous: 1, peak: 1, maxDrawdown: 0, count: 0, mean: 0, m2: 0, exposed: 0 };
  for (let i = 1; i < n; i++) {
    const signal = signals[i - 1] as number;
    const time = openTime[i] as number;
    if (signal !== 0) book.applySignal(signal, open[i] as number, time);
    if (book.side !== 0)
      book.checkExits(open[i] as number, high[i] as number, low[i] as number, time);
    if (book.side !== 0) {
      stats.exposed++;
      if (i === n - 1) book.close(close[i] as number, time, 'end');
    }
    const equity = book.cash + book.units * (close[i] as number);
    // Welford: one pass, numerically stable, no array of returns.
    const ret = equity / stats.previous - 1;
    stats.count++;
    const delta = ret - stats.mean;
    stats.mean += delta / stats.count;
    stats.m2 += delta * (ret - stats.mean);
    stats.previous = equity;
    if (equity > stats.peak) stats.peak = equity;
    else if ((stats.peak - equity) / stats.peak > stats.maxDrawdown) {
      stats.maxDrawdown = (stats.peak - equity) / stats.peak;
    }
  }
  return { metrics: metricsOf(book, stats, n, barsPerYear(candles)), trades };
}

interface Stats {
  previous: number;
  maxDrawdown: number;
  count: number;
  mean: number;
  m2: number;
  exposed: number;
}

function metricsOf(book: Book, s: Stats, bars: number, perYear: number): VariantMetrics {
  const sd = s.count > 1 ? Math.sqrt(s.m2 / (s.count - 1)) : 0;
  return {
    total_return_pct: (s.previous - 1) * 100,
    trades: book.trades,
    max_drawdown_pct: s.maxDrawdown * 100,
    sharpe: sd > 0 ? (s.mean / sd) * Math.sqrt(perYear) : 0,
    win_rate_pct: book.trades > 0 ? (book.wins / book.trades) * 100 : 0,
    profit_factor: book.grossLoss > 0 ? book.grossProfit / book.grossLoss : null,
    exposure_pct: bars > 0 ? (s.exposed / bars) * 100 : 0,
  };
}
