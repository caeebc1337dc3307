import { describe, expect, it } from 'vitest';
import { BollingerBands, EMA, MACD, RSI, SMA } from 'trading-signals';
import type { CandleLike } from './candle-arrays';
import type { ExecutionParams, ExitReason, Trade, VariantMetrics } from './simulate';
import { computeSignals, type StrategySpec } from './strategies';
import { IndicatorCache } from './indicator-cache';
import { barsPerYear, toCandleArrays } from './candle-arrays';
import { simulateVariant } from './simulate';
import { HOUR_MS, loadBundledBtc1h } from './testing/bundled-candles';

/*
 * An independent, deliberately plain bar-by-bar backtest: candle objects, trading-signals
 * indicator classes, a position object, an equity array and two-pass statistics. Slow and obvious
 * on purpose; the engine must agree with it. Shares only the written rules with the engine.
 */

type Series = (number | null)[];

function crossings(line: Series, base: Series): number[] {
  return line.map((value, i) => {
    const [a0, b0, a1, b1] = [line[i - 1], base[i - 1], value, base[i]];
    if (i === 0 || a0 == null || b0 == null || a1 == null || b1 == null) return 0;
    if (a0 <= b0 && a1 > b1) return 1;
    if (a0 >= b0 && a1 < b1) return -1;
    return 0;
  });
}

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

/** The strategy's signal per bar, from trading-signals values. */
function referenceSignals(candles: CandleLike[], spec: StrategySpec): number[] {
  const closes = candles.map((c) => c.close);
  switch (spec.kind) {
    case 'ma_cross':
      return crossings(
        movingAverage(closes, spec.ma, spec.fast),
        movingAverage(closes, spec.ma, spec.slow),
      );
    case 'macd_cross': {
      const macd = new MACD(new EMA(spec.fast), new EMA(spec.slow), new EMA(spec.signal));
      const points = closes.map((c) => macd.add(c));
      let seen = 0;
      const signalLine = points.map((p) =>
        p === null ? null : ++seen >= spec.signal ? p.signal : null,
      );
      return crossings(
        points.map((p) => p?.macd ?? null),
        signalLine,
      );
    }
    case 'rsi_reversion': {
      const rsi = new RSI(spec.period);
      return closes.map((c) => {
        const v = rsi.add(c);
        return v === null ? 0 : v < spec.lower ? 1 : v > spec.upper ? -1 : 0;
      });
    }
    case 'bollinger_breakout': {
      const bands = new BollingerBands(spec.period, spec.k);
      return closes.map((c) => {
        const b = bands.add(c);
        return b === null ? 0 : c > b.upper ? 1 : c < b.lower ? -1 : 0;
      });
    }
  }
}

interface Position {
  side: 1 | -1;
  units: number;
  entryPrice: number;
  entryTime: number;
  cashBefore: number;
  best: number;
}

interface ReferenceOptions {
  /** 1 = slippage against the trader (the rule); -1 = a deliberately wrong variant. */
  slipSign?: number;
}

/** Plain simulation of the written rules (see simulate.ts doc comment). */
function referenceBacktest(
  candles: CandleLike[],
  signals: number[],
  p: ExecutionParams,
  barsPerYear: number,
  options: ReferenceOptions = {},
): { metrics: VariantMetrics; trades: Trade[] } {
  const slip = ((options.slipSign ?? 1) * p.slippageBps) / 10_000;
  const fee = p.feeBps / 10_000;
  let cash = 1;
  let pos: Position | null = null;
  const trades: Trade[] = [];
  const equity: number[] = [1];
  let exposed = 0;
  const enter = (side: 1 | -1, price: number, time: number): void => {
    const fill = side === 1 ? price * (1 + slip) : price * (1 - slip);
    const notional = p.fraction * cash;
    const units = (side * notional) / fill;
    pos = { side, units, entryPrice: fill, entryTime: time, cashBefore: cash, best: fill };
    cash = cash - (units * fill + notional * fee);
  };
  const exit = (price: number, time: number, reason: ExitReason): void => {
    if (pos === null) return;
    const fill = pos.side === 1 ? price * (1 - slip) : price * (1 + slip);
    const value = pos.units * fill;
    cash = cash + (value - Math.abs(value) * fee);
    trades.push({
      side: pos.side === 1 ? 'long' : 'short',
      entryTime: pos.entryTime,
      entryPrice: pos.entryPrice,
      exitTime: time,
      exitPrice: fill,
      pnl: cash - pos.cashBefore,
      reason,
    });
    pos = null;
  };
  for (let i = 1; i < candles.length; i++) {
    const bar = candles[i] as CandleLike;
    const signal = signals[i - 1] ?? 0;
    const wanted = signal === -1 && p.direction === 'long_only' ? 0 : signal;
    const held: number = pos === null ? 0 : (pos as Position).side;
    if (signal !== 0 && wanted !== held) {
      exit(bar.open, bar.openTime, 'signal');
      if (wanted === 1 || wanted === -1) enter(wanted, bar.open, bar.openTime);
    }
    if (pos !== null) referenceExits(pos, bar, p, exit);
    if (pos !== null) {
      exposed++;
      if (i === candles.length - 1) exit(bar.close, bar.openTime, 'end');
    }
    const open = pos as Position | null;
    equity.push(cash + (open === null ? 0 : open.units * bar.close));
  }
  return {
    metrics: referenceMetrics(equity, trades, exposed, candles.length, barsPerYear),
    trades,
  };
}

/** Stops before targets; among stops the level met first as price moves away from the entry. */
function referenceExits(
  pos: Position,
  bar: CandleLike,
  p: ExecutionParams,
  exit: (price: number, time: number, reason: ExitReason) => void,
): void {
  const long = pos.side === 1;
  const stops: { level: number; reason: ExitReason }[] = [];
  if (p.stopLossPct > 0) {
    stops.push({ level: pos.entryPrice * (1 - (pos.side * p.stopLossPct) / 100), reason: 'stop' });
  }
  if (p.trailingStopPct > 0) {
    stops.push({
      level: pos.best * (1 - (pos.side * p.trailingStopPct) / 100),
      reason: 'trailing',
    });
  }
  const touched = stops.filter((s) => (long ? bar.low <= s.level : bar.high >= s.level));
  touched.sort((a, b) => (long ? b.level - a.level : a.level - b.level));
  const first = touched[0];
  if (first !== undefined) {
    const price = long ? Math.min(bar.open, first.level) : Math.max(bar.open, first.level);
    return exit(price, bar.openTime, first.reason);
  }
  if (p.takeProfitPct > 0) {
    const level = pos.entryPrice * (1 + (pos.side * p.takeProfitPct) / 100);
    if (long ? bar.high >= level : bar.low <= level) {
      return exit(
        long ? Math.max(bar.open, level) : Math.min(bar.open, level),
        bar.openTime,
        'take_profit',
      );
    }
  }
  pos.best = long ? Math.max(pos.best, bar.high) : Math.min(pos.best, bar.low);
}

function referenceMetrics(
  equity: number[],
  trades: Trade[],
  exposed: number,
  bars: number,
  barsPerYear: number,
): VariantMetrics {
  const returns = equity.slice(1).map((e, i) => e / (equity[i] as number) - 1);
  const mean = returns.reduce((a, b) => a + b, 0) / returns.length;
  const variance = returns.reduce((a, r) => a + (r - mean) ** 2, 0) / (returns.length - 1);
  const sd = Math.sqrt(variance);
  let peak = -Infinity;
  let maxDd = 0;
  for (const e of equity) {
    peak = Math.max(peak, e);
    maxDd = Math.max(maxDd, (peak - e) / peak);
  }
  const wins = trades.filter((t) => t.pnl > 0);
  const profit = wins.reduce((a, t) => a + t.pnl, 0);
  const loss = trades.filter((t) => t.pnl <= 0).reduce((a, t) => a - t.pnl, 0);
  return {
    total_return_pct: ((equity[equity.length - 1] as number) - 1) * 100,
    trades: trades.length,
    max_drawdown_pct: maxDd * 100,
    sharpe: sd > 0 ? (mean / sd) * Math.sqrt(barsPerYear) : 0,
    win_rate_pct: trades.length > 0 ? (wins.length / trades.length) * 100 : 0,
    profit_factor: loss > 0 ? profit / loss : null,
    exposure_pct: (exposed / bars) * 100,
  };
}

const STRATEGIES: StrategySpec[] = [
  { kind: 'ma_cross', ma: 'ema', fast: 12, slow: 26 },
  { kind: 'ma_cross', ma: 'sma', fast: 10, slow: 50 },
  { kind: 'ma_cross', ma: 'ema', fast: 5, slow: 100 },
  { kind: 'rsi_reversion', period: 14, lower: 30, upper: 70 },
  { kind: 'rsi_reversion', period: 7, lower: 20, upper: 80 },
  { kind: 'bollinger_breakout', period: 20, k: 2 },
  { kind: 'bollinger_breakout', period: 50, k: 1.5 },
  { kind: 'macd_cross', fast: 12, slow: 26, signal: 9 },
  { kind: 'macd_cross', fast: 8, slow: 21, signal: 5 },
];

const BASE = {
  fraction: 1,
  feeBps: 0,
  slippageBps: 0,
  stopLossPct: 0,
  takeProfitPct: 0,
  trailingStopPct: 0,
} as const;

const EXECUTIONS: ExecutionParams[] = [
  { ...BASE, direction: 'long_only' },
  { ...BASE, direction: 'long_short', feeBps: 10, slippageBps: 5, fraction: 0.5 },
  {
    ...BASE,
    direction: 'long_only',
    feeBps: 7.5,
    slippageBps: 2,
    stopLossPct: 2,
    takeProfitPct: 4,
  },
  {
    ...BASE,
    direction: 'long_short',
    feeBps: 4,
    slippageBps: 1,
    stopLossPct: 3,
    trailingStopPct: 1.5,
  },
  {
    ...BASE,
    direction: 'long_short',
    feeBps: 10,
    slippageBps: 3,
    fraction: 0.8,
    stopLossPct: 1.5,
    takeProfitPct: 2.5,
    trailingStopPct: 2,
  },
];

const objects = loadBundledBtc1h();
const candles = toCandleArrays(objects, HOUR_MS);
const cache = new IndicatorCache(candles);
const perYear = barsPerYear(candles);

function expectClose(actual: number | null, expected: number | null, what: string): void {
  if (actual === null || expected === null) return expect(actual, what).toBe(expected);
  const scale = Math.max(1, Math.abs(actual), Math.abs(expected));
  expect(Math.abs(actual - expected) / scale, `${what}: ${actual} vs ${expected}`).toBeLessThan(
    1e-9,
  );
}

function expectSameTrades(actual: Trade[], expected: Trade[]): void {
  expect(actual.map((t) => [t.side, t.entryTime, t.exitTime, t.reason])).toEqual(
    expected.map((t) => [t.side, t.entryTime, t.exitTime, t.reason]),
  );
  actual.forEach((t, i) => {
    const e = expected[i] as Trade;
    expectClose(t.entryPrice, e.entryPrice, `trade ${i} entryPrice`);
    expectClose(t.exitPrice, e.exitPrice, `trade ${i} exitPrice`);
    expectClose(t.pnl, e.pnl, `trade ${i} pnl`);
  });
}

describe('simulateVariant agrees with a plain bar-by-bar reference (bundled BTCUSDT 1h)', () => {
  it('uses the real series', () => {
    expect(candles.length).toBe(4999);
    expect(perYear).toBe(8760);
  });

  for (const spec of STRATEGIES) {
    it(`${JSON.stringify(spec)}: same signals, metrics and trades for every execution`, () => {
      const signals = computeSignals(cache, spec);
      const expectedSignals = referenceSignals(objects, spec);
      expect(Array.from(signals)).toEqual(expectedSignals);
      expect(expectedSignals.filter((s) => s !== 0).length).toBeGreaterThan(10);
      for (const execution of EXECUTIONS) {
        const actual = simulateVariant(candles, signals, execution, { detailed: true });
        const expected = referenceBacktest(objects, expectedSignals, execution, perYear);
        expect(actual.metrics.trades).toBeGreaterThan(0);
        for (const key of Object.keys(expected.metrics) as (keyof VariantMetrics)[]) {
          expectClose(actual.metrics[key], expected.metrics[key], `${key} ${execution.direction}`);
        }
        expectSameTrades(actual.trades, expected.trades);
      }
    });
  }

  it('every exit reason occurs across the variants (the comparison covers each rule)', () => {
    const reasons = new Set<ExitReason>();
    for (const spec of STRATEGIES) {
      const signals = computeSignals(cache, spec);
      for (const execution of EXECUTIONS) {
        simulateVariant(candles, signals, execution, { detailed: true }).trades.forEach((t) =>
          reasons.add(t.reason),
        );
      }
    }
    expect([...reasons].sort()).toEqual(['end', 'signal', 'stop', 'take_profit', 'trailing']);
  });

  it('the comparison can fail: a reference with slippage in the trader’s favour disagrees', () => {
    const spec = STRATEGIES[0] as StrategySpec;
    const execution = EXECUTIONS[1] as ExecutionParams;
    const signals = computeSignals(cache, spec);
    const actual = simulateVariant(candles, signals, execution).metrics;
    const right = referenceBacktest(objects, Array.from(signals), execution, perYear).metrics;
    const wrong = referenceBacktest(objects, Array.from(signals), execution, perYear, {
      slipSign: -1,
    }).metrics;
    expectClose(actual.total_return_pct, right.total_return_pct, 'right');
    expect(Math.abs(actual.total_return_pct - wrong.total_return_pct)).toBeGreaterThan(0.1);
  });
});
