import { EMA, SMA } from 'trading-signals';
import type { CandleLike, ExecutionParams, StrategySpec } from '@tda/backtest';

/*
 * The "simple reference loop" of the bench: the plain bar-by-bar backtest a first version would
 * be — candle objects, a position object, an equity array, two-pass statistics — written after
 * the independent reference of libs/backtest/src/simulate.reference.spec.ts (same rules: fills at
 * the next open, slippage and fees, stop before target, trailing on completed bars, `end` exit).
 * `referenceLoop` takes precomputed signals (the bar loops compared alone); `referenceBacktest`
 * also computes its indicators per variant with trading-signals, as that reference does (what a
 * simple backtester does; the engine shares each series across every variant using it).
 */

type Series = (number | null)[];

function movingAverage(closes: number[], kind: 'ema' | 'sma', period: number): Series {
  if (kind === 'sma') {
    const sma = new SMA(period);
    return closes.map((c) => sma.add(c));
  }
  const ema = new EMA(period);
  return closes.map((c) => {
    const value = ema.add(c);
    return ema.isStable ? value : null;
  });
}

/** Moving-average cross signals per bar, from trading-signals values (ma_cross only). */
export function referenceSignals(candles: CandleLike[], spec: StrategySpec): number[] {
  if (spec.kind !== 'ma_cross')
    throw new Error(`the bench reference runs ma_cross, not ${spec.kind}`);
  const closes = candles.map((c) => c.close);
  const line = movingAverage(closes, spec.ma, spec.fast);
  const base = movingAverage(closes, spec.ma, spec.slow);
  return line.map((value, i) => {
    const [a0, b0, a1, b1] = [line[i - 1], base[i - 1], value, base[i]];
    if (i === 0 || a0 == null || b0 == null || a1 == null || b1 == null) return 0;
    if (a0 <= b0 && a1 > b1) return 1;
    if (a0 >= b0 && a1 < b1) return -1;
    return 0;
  });
}

/** The whole simple backtest of one variant: its indicators, then the loop. */
export function referenceBacktest(
  candles: CandleLike[],
  spec: StrategySpec,
  p: ExecutionParams,
  barsPerYear: number,
): ReferenceMetrics {
  return referenceLoop(candles, referenceSignals(candles, spec), p, barsPerYear);
}

interface Position {
  side: 1 | -1;
  units: number;
  entryPrice: number;
  cashBefore: number;
  best: number;
}

interface Closed {
  pnl: number;
}

export interface ReferenceMetrics {
  totalReturnPct: number;
  trades: number;
  maxDrawdownPct: number;
  sharpe: number;
}

export function referenceLoop(
  candles: CandleLike[],
  signals: number[],
  p: ExecutionParams,
  barsPerYear: number,
): ReferenceMetrics {
  const slip = p.slippageBps / 10_000;
  const fee = p.feeBps / 10_000;
  const account = { cash: 1, pos: null as Position | null, trades: [] as Closed[] };
  const equity: number[] = [1];
  for (let i = 1; i < candles.length; i++) {
    const bar = candles[i] as CandleLike;
    const signal = signals[i - 1] ?? 0;
    const wanted = signal === -1 && p.direction === 'long_only' ? 0 : signal;
    const held = account.pos === null ? 0 : account.pos.side;
    if (signal !== 0 && wanted !== held) {
      exit(account, bar.open, slip, fee);
      if (wanted === 1 || wanted === -1) enter(account, wanted, bar.open, p.fraction, slip, fee);
    }
    if (account.pos !== null) exits(account, bar, p, slip, fee);
    if (account.pos !== null && i === candles.length - 1) exit(account, bar.close, slip, fee);
    const pos = account.pos as Position | null;
    equity.push(account.cash + (pos === null ? 0 : pos.units * bar.close));
  }
  return metrics(equity, account.trades.length, barsPerYear);
}

type Account = { cash: number; pos: Position | null; trades: Closed[] };

function enter(
  a: Account,
  side: 1 | -1,
  price: number,
  fraction: number,
  slip: number,
  fee: number,
) {
  const fill = side === 1 ? price * (1 + slip) : price * (1 - slip);
  const notional = fraction * a.cash;
  const units = (side * notional) / fill;
  a.pos = { side, units, entryPrice: fill, cashBefore: a.cash, best: fill };
  a.cash = a.cash - (units * fill + notional * fee);
}

function exit(a: Account, price: number, slip: number, fee: number): void {
  if (a.pos === null) return;
  const fill = a.pos.side === 1 ? price * (1 - slip) : price * (1 + slip);
  const value = a.pos.units * fill;
  a.cash = a.cash + (value - Math.abs(value) * fee);
  a.trades.push({ pnl: a.cash - a.pos.cashBefore });
  a.pos = null;
}

function exits(a: Account, bar: CandleLike, p: ExecutionParams, slip: number, fee: number): void {
  const pos = a.pos as Position;
  const long = pos.side === 1;
  const stops: number[] = [];
  if (p.stopLossPct > 0) stops.push(pos.entryPrice * (1 - (pos.side * p.stopLossPct) / 100));
  if (p.trailingStopPct > 0) stops.push(pos.best * (1 - (pos.side * p.trailingStopPct) / 100));
  const touched = stops.filter((level) => (long ? bar.low <= level : bar.high >= level));
  touched.sort((x, y) => (long ? y - x : x - y));
  const first = touched[0];
  if (first !== undefined) {
    return exit(a, long ? Math.min(bar.open, first) : Math.max(bar.open, first), slip, fee);
  }
  if (p.takeProfitPct > 0) {
    const level = pos.entryPrice * (1 + (pos.side * p.takeProfitPct) / 100);
    if (long ? bar.high >= level : bar.low <= level) {
      return exit(a, long ? Math.max(bar.open, level) : Math.min(bar.open, level), slip, fee);
    }
  }
  pos.best = long ? Math.max(pos.best, bar.high) : Math.min(pos.best, bar.low);
}

function metrics(equity: number[], trades: number, barsPerYear: number): ReferenceMetrics {
  const returns = equity.slice(1).map((e, i) => e / (equity[i] as number) - 1);
  const mean = returns.reduce((x, y) => x + y, 0) / returns.length;
  const variance = returns.reduce((x, r) => x + (r - mean) ** 2, 0) / (returns.length - 1);
  const sd = Math.sqrt(variance);
  let peak = -Infinity;
  let maxDd = 0;
  for (const e of equity) {
    peak = Math.max(peak, e);
    maxDd = Math.max(maxDd, (peak - e) / peak);
  }
  return {
    totalReturnPct: ((equity[equity.length - 1] as number) - 1) * 100,
    trades,
    maxDrawdownPct: maxDd * 100,
    sharpe: sd > 0 ? (mean / sd) * Math.sqrt(barsPerYear) : 0,
  };
}
