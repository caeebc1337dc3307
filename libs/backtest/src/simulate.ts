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
  const stats = runBars(candles, signals, book);
  return { metrics: metricsOf(book, stats, n, barsPerYear(candles)), trades };
}

/** What the bar loop streams instead of an equity array. */
interface BarStats {
  equity: number;
  maxDrawdown: number;
  /** Bars with a return (every bar but the first). */
  count: number;
  /** Σ returns and Σ returns² (flat bars add an exact 0 to both, so they are skipped). */
  sum: number;
  sumSq: number;
  exposed: number;
}

/**
 * The hot loop. The state read on every bar lives in local variables (registers), copied from the
 * Book only after a fill; a flat bar without a fill costs one signal test (its return is exactly
 * 0 and the equity does not move). No allocation, no call per bar; fills call the Book.
 * Longer than a screen on purpose: split into functions, the state would leave the registers.
 */
function runBars(c: CandleArrays, signals: SignalArray, book: Book): BarStats {
  const { openTime, open, high, low, close } = c;
  const last = c.length - 1;
  const longShort = book.r.longShort;
  const trailOn = book.r.trail > 0;
  let side = 0;
  let cash = 1;
  let units = 0;
  let stopLevel = 0;
  let trailLevel = 0;
  let targetLevel = 0;
  let trailMul = 1;
  let extreme = 0;
  let previous = 1;
  let peak = 1;
  let maxDd = 0;
  let sum = 0;
  let sumSq = 0;
  let exposed = 0;
  for (let i = 1; i <= last; i++) {
    const signal = signals[i - 1] as number;
    if (signal !== 0 && (signal > 0 || longShort ? signal : 0) !== side) {
      book.applySignal(signal, open[i] as number, openTime[i] as number);
      side = book.side;
      cash = book.cash;
      units = book.units;
      stopLevel = book.stopLevel;
      trailLevel = book.trailLevel;
      targetLevel = book.targetLevel;
      trailMul = book.trailMul;
      extreme = book.entryPrice;
    } else if (side === 0) continue;
    if (side !== 0) {
      const h = high[i] as number;
      const l = low[i] as number;
      const fill =
        side > 0
          ? longExit(open[i] as number, h, l, stopLevel, trailLevel, targetLevel)
          : shortExit(open[i] as number, h, l, stopLevel, trailLevel, targetLevel);
      if (fill === fill) {
        // not NaN: an exit on this bar
        book.close(fill, openTime[i] as number, exitReason(side, h, l, stopLevel, trailLevel));
        side = 0;
        cash = book.cash;
        units = 0;
      } else if (trailOn && (side > 0 ? h > extreme : l < extreme)) {
        extreme = side > 0 ? h : l;
        trailLevel = extreme * trailMul;
      }
    }
    if (side !== 0) {
      exposed++;
      if (i === last) {
        book.close(close[i] as number, openTime[i] as number, 'end');
        side = 0;
        cash = book.cash;
        units = 0;
      }
    }
    const equity = cash + units * (close[i] as number);
    const ret = equity / previous - 1;
    sum += ret;
    sumSq += ret * ret;
    previous = equity;
    if (equity > peak) peak = equity;
    else if (peak - equity > maxDd * peak) maxDd = Math.max(maxDd, (peak - equity) / peak);
  }
  return { equity: previous, maxDrawdown: maxDd, count: last, sum, sumSq, exposed };
}

/**
 * Intra-bar exit of a long position, or NaN. The order of prices inside a bar is unknown, so the
 * rule is conservative: the stop (or trailing stop) is checked before the take profit, and the
 * trailing reference moves only with bars already completed. A gap beyond a level fills at the open.
 */
function longExit(o: number, h: number, l: number, stop: number, trail: number, target: number) {
  const level = trail > stop ? trail : stop;
  if (l <= level) return o < level ? o : level;
  if (h >= target) return o > target ? o : target;
  return Number.NaN;
}

/** The mirror of longExit for a short position. */
function shortExit(o: number, h: number, l: number, stop: number, trail: number, target: number) {
  const level = trail < stop ? trail : stop;
  if (h >= level) return o > level ? o : level;
  if (l <= target) return o < target ? o : target;
  return Number.NaN;
}

/** Why the exit longExit/shortExit found happened (called on exits only). */
function exitReason(side: number, h: number, l: number, stop: number, trail: number): ExitReason {
  if (side > 0) {
    if (l <= (trail > stop ? trail : stop)) return trail > stop ? 'trailing' : 'stop';
  } else if (h >= (trail < stop ? trail : stop)) return trail < stop ? 'trailing' : 'stop';
  return 'take_profit';
}

function metricsOf(book: Book, s: BarStats, bars: number, perYear: number): VariantMetrics {
  const mean = s.count > 0 ? s.sum / s.count : 0;
  // Σr² − mean·Σr: returns are ~1e-3 with a mean far below their spread, so no cancellation;
  // a variance below 1e-12 of the mean square is rounding noise of a constant series.
  const variance = s.count > 1 ? (s.sumSq - mean * s.sum) / (s.count - 1) : 0;
  const sd = variance > (s.sumSq / Math.max(1, s.count)) * 1e-12 ? Math.sqrt(variance) : 0;
  return {
    total_return_pct: (s.equity - 1) * 100,
    trades: book.trades,
    max_drawdown_pct: s.maxDrawdown * 100,
    sharpe: sd > 0 ? (mean / sd) * Math.sqrt(perYear) : 0,
    win_rate_pct: book.trades > 0 ? (book.wins / book.trades) * 100 : 0,
    profit_factor: book.grossLoss > 0 ? book.grossProfit / book.grossLoss : null,
    exposure_pct: bars > 0 ? (s.exposed / bars) * 100 : 0,
  };
}
