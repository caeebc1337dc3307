import { BacktestParamsInvalidError } from './backtest.errors';
import type { CandleArrays } from './candle-arrays';
import { simulateVariant, type ExecutionParams, type ExitReason, type Trade } from './simulate';

export * from './walk-forward-table';

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 } as const;
const DAY_MS = UNIT_MS.d;

/** The pattern of EvaluationPeriod (contracts/recommendation_evaluation.schema.json). */
const PERIOD = /^([1-9][0-9]{0,3})([mhdw])$/;

/** `<n>m|h|d|w` ('4h', '1d', '1w') → ms. */
export function parsePeriod(text: string): number {
  const match = PERIOD.exec(text);
  const unit = match?.[2] as keyof typeof UNIT_MS | undefined;
  if (match === null || unit === undefined) {
    throw new BacktestParamsInvalidError(
      `period '${text}' is not <n><unit> with n in 1..9999 and unit m, h, d or w (e.g. 4h, 1d, 1w)`,
      { period: text },
    );
  }
  return Number(match[1]) * UNIT_MS[unit];
}

/** from, from + every, … ≤ to (ms epoch); refuses more than `max` points before allocating them. */
export function walkForwardAsOfs(from: number, to: number, everyMs: number, max: number): number[] {
  if (!Number.isFinite(from) || !Number.isFinite(to) || !(to >= from)) {
    throw new BacktestParamsInvalidError('walk-forward `to` must not be before `from`', {
      from,
      to,
    });
  }
  if (!(everyMs > 0) || !Number.isFinite(everyMs)) {
    throw new BacktestParamsInvalidError('walk-forward period must be positive', { everyMs });
  }
  const count = Math.floor((to - from) / everyMs) + 1;
  if (count > max) {
    throw new BacktestParamsInvalidError(`walk-forward has ${count} points, more than ${max}`, {
      count,
      max,
    });
  }
  return Array.from({ length: count }, (_, i) => from + i * everyMs);
}

/** The part of a recommendation (and its artifact's asOf) that the score depends on. */
export interface RecommendationToScore {
  /** ms epoch: the recommendation knows the candles before it, nothing at or after it. */
  asOf: number;
  action: 'BUY' | 'SELL' | 'HOLD' | 'REDUCE';
  /** Absolute price. */
  stopLoss?: number;
  /** Absolute prices, nearest first: the first one is the exit target. */
  takeProfit?: readonly number[];
  horizonDays: number;
}

/**
 * The outcome of one recommendation over its window (the bars with openTime in
 * [asOf, asOf + horizonDays days)). Prices of the trade are the engine's fills (slippage
 * included); hit, MAE and buy-and-hold are market moves measured from the entry bar's open,
 * without costs (was the direction right?), so they do not depend on the cost assumptions.
 */
export interface RecommendationScore {
  /** pending: the candles do not cover the window yet; no_trade: HOLD or REDUCE. */
  status: 'scored' | 'no_trade' | 'pending';
  direction: 'long' | 'short' | null;
  entryTime: number | null;
  entryPrice: number | null;
  exitTime: number | null;
  exitPrice: number | null;
  exitReason: ExitReason | null;
  /** The horizon-end close vs the entry open: above for a long, below for a short. */
  hit: boolean | null;
  /** Following it (stop, first target, the costs, whole equity): net % of the position. */
  returnPct: number | null;
  /** Worst move against the position while held (entry bar..exit bar) vs the entry open, ≤ 0. */
  maePct: number | null;
  /** Entry open → horizon-end close, long, no costs. */
  buyAndHoldPct: number | null;
}

export interface ScoringCosts {
  feeBps: number;
  slippageBps: number;
}

const EMPTY: Omit<RecommendationScore, 'status'> = {
  direction: null,
  entryTime: null,
  entryPrice: null,
  exitTime: null,
  exitPrice: null,
  exitReason: null,
  hit: null,
  returnPct: null,
  maePct: null,
  buyAndHoldPct: null,
};

/** Bar indexes of the outcome window, inclusive. */
interface OutcomeWindow {
  first: number;
  last: number;
}

/**
 * Scores one recommendation against the candles after its asOf through simulateVariant. Only
 * the window's bars (and the bar before it, as the engine's signal bar, whose prices the engine
 * never reads) enter the computation: earlier history and later bars cannot change the score.
 */
export function scoreRecommendation(
  reco: RecommendationToScore,
  candles: CandleArrays,
  costs: ScoringCosts,
): RecommendationScore {
  if (!(reco.horizonDays > 0) || !Number.isFinite(reco.horizonDays)) {
    throw new BacktestParamsInvalidError('horizonDays must be positive', {
      horizonDays: reco.horizonDays,
    });
  }
  const window = outcomeWindow(candles, reco.asOf, reco.horizonDays * DAY_MS);
  if (window === null) return { ...EMPTY, status: 'pending' };
  const entryOpen = candles.open[window.first] as number;
  const horizonClose = candles.close[window.last] as number;
  const buyAndHoldPct = (horizonClose / entryOpen - 1) * 100;
  if (reco.action === 'HOLD' || reco.action === 'REDUCE') {
    return { ...EMPTY, status: 'no_trade', buyAndHoldPct };
  }
  const side = reco.action === 'BUY' ? 1 : -1;
  const { trade, maePct } = followRecommendation(candles, window, side, reco, costs);
  return {
    status: 'scored',
    direction: side > 0 ? 'long' : 'short',
    entryTime: trade.entryTime,
    entryPrice: trade.entryPrice,
    exitTime: trade.exitTime,
    exitPrice: trade.exitPrice,
    exitReason: trade.reason,
    hit: side > 0 ? horizonClose > entryOpen : horizonClose < entryOpen,
    returnPct: trade.pnl * 100,
    maePct,
    buyAndHoldPct,
  };
}

/**
 * The window's bar indexes, or null (pending) when the candles do not reach its end yet, have
 * no bar at/after asOf, or have a hole over the whole window (not scoreable from these candles).
 */
function outcomeWindow(c: CandleArrays, asOf: number, horizonMs: number): OutcomeWindow | null {
  const end = asOf + horizonMs;
  const n = c.length;
  if (n === 0 || (c.openTime[n - 1] as number) + c.barMs < end) return null;
  const first = firstAtOrAfter(c.openTime, asOf);
  const last = firstAtOrAfter(c.openTime, end) - 1;
  return first < n && first <= last ? { first, last } : null;
}

/** Binary search in ascending times: the first index with time ≥ t (length when none). */
function firstAtOrAfter(times: Float64Array, t: number): number {
  let lo = 0;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((times[mid] as number) < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * A level as the engine's percentage, relative to the entry open: > 0 on the right side, ≤ 0 on
 * the wrong side (the open already gapped through it), 0 when absent. The engine applies the
 * percentage to its slipped fill, so the effective level moves by the slippage (a few bps).
 */
function levelPct(
  side: number,
  entryOpen: number,
  level: number | undefined,
  kind: 'stop' | 'target',
) {
  if (level === undefined) return { pct: 0, wrongSide: false };
  const away = kind === 'stop' ? -side : side;
  const pct = away * (level / entryOpen - 1) * 100;
  return { pct, wrongSide: !(pct > 0) };
}

/** The engine refuses a stop of 100% or more; a wider one (short, ≥ 2× the entry) is clamped. */
const MAX_STOP_PCT = 99.99;

/**
 * Runs the single trade through the engine: signal on bar 0 (known at its close), 0 afterwards
 * (0 = keep what is held), so one entry at the window's first open and no re-entry after an exit.
 *
 * A level on the wrong side of the entry open (a long's stop at/above it, its target at/below it;
 * mirrored for a short) means the market gapped through it before the entry: the engine's own
 * gap rule fills such a level at the open. A percentage cannot express that (≤ 0 means off), so
 * the engine runs on a one-bar window whose bar is flat at the entry open: it enters and leaves
 * at that open with both sides' costs, and the `end` exit is named for the level (stop first,
 * as the engine checks the stop first). Never silently "off".
 */
function followRecommendation(
  c: CandleArrays,
  window: OutcomeWindow,
  side: number,
  reco: RecommendationToScore,
  costs: ScoringCosts,
): { trade: Trade; maePct: number } {
  const entryOpen = c.open[window.first] as number;
  const stop = levelPct(side, entryOpen, reco.stopLoss, 'stop');
  const target = levelPct(side, entryOpen, reco.takeProfit?.[0], 'target');
  const immediate = stop.wrongSide || target.wrongSide;
  const bars = immediate
    ? flatEntryBar(c, window.first)
    : windowArrays(c, window.first, window.last);
  const signals = new Int8Array(bars.length);
  signals[0] = side;
  const params: ExecutionParams = {
    direction: 'long_short',
    fraction: 1,
    feeBps: costs.feeBps,
    slippageBps: costs.slippageBps,
    stopLossPct: immediate ? 0 : Math.min(stop.pct, MAX_STOP_PCT),
    takeProfitPct: immediate ? 0 : target.pct,
    trailingStopPct: 0,
  };
  const { trades } = simulateVariant(bars, signals, params, { detailed: true });
  const found = trades[0];
  // ≥ 2 bars and a signal on bar 0 only: exactly one round trip (0 never re-enters after an exit).
  if (found === undefined || trades.length !== 1) {
    throw new Error(`walk-forward: expected one trade from the engine, got ${trades.length}`);
  }
  const trade: Trade = immediate
    ? { ...found, reason: stop.wrongSide ? 'stop' : 'take_profit' }
    : found;
  const stopMarket =
    trade.reason === 'stop' ? trade.exitPrice / (1 - side * (costs.slippageBps / 10_000)) : null;
  return { trade, maePct: maePct(bars, side, entryOpen, trade.exitTime, stopMarket) };
}

/** Columns of the bars [first, last] behind one signal bar (the bar before, else a stand-in). */
function windowArrays(c: CandleArrays, first: number, last: number): CandleArrays {
  // The engine never reads bar 0's prices or time (it fills bar 0's signal on bar 1): when asOf
  // is at the first candle, the entry bar itself stands in as the signal bar.
  const signalBar = first > 0 ? first - 1 : first;
  const length = last - first + 2;
  const take = (column: Float64Array): Float64Array => {
    const out = new Float64Array(length);
    out[0] = column[signalBar] as number;
    out.set(column.subarray(first, last + 1), 1);
    return out;
  };
  return {
    length,
    barMs: c.barMs,
    openTime: take(c.openTime),
    open: take(c.open),
    high: take(c.high),
    low: take(c.low),
    close: take(c.close),
    volume: take(c.volume),
  };
}

/** The signal bar and the entry bar reduced to its open: the position lives only at that price. */
function flatEntryBar(c: CandleArrays, first: number): CandleArrays {
  const bars = windowArrays(c, first, first);
  const open = bars.open[1] as number;
  bars.high[1] = open;
  bars.low[1] = open;
  bars.close[1] = open;
  return bars;
}

/**
 * Worst adverse price from the entry bar to the exit bar vs the entry open, in % (≤ 0). On a stop's
 * exit bar the position is gone at the stop's price (the engine assumes the stop came first), so
 * the rest of that bar's range does not count.
 */
function maePct(
  bars: CandleArrays,
  side: number,
  entryOpen: number,
  exitTime: number,
  stopMarket: number | null,
): number {
  let worst = entryOpen;
  for (let i = 1; i < bars.length; i++) {
    const exitBar = bars.openTime[i] === exitTime;
    const range = side > 0 ? (bars.low[i] as number) : (bars.high[i] as number);
    const adverse = exitBar && stopMarket !== null ? stopMarket : range;
    worst = side > 0 ? Math.min(worst, adverse) : Math.max(worst, adverse);
    if (exitBar) break;
  }
  return side > 0 ? (worst / entryOpen - 1) * 100 : (1 - worst / entryOpen) * 100;
}
