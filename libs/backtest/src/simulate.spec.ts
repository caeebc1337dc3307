import { describe, expect, it } from 'vitest';
import { toCandleArrays, type CandleLike } from './candle-arrays';
import { simulateVariant, type ExecutionParams } from './simulate';

const HOUR = 3_600_000;

/** Bars from [open, high, low, close]; openTime = index hours. */
function bars(rows: [number, number, number, number][]) {
  const candles: CandleLike[] = rows.map(([open, high, low, close], i) => ({
    openTime: i * HOUR,
    open,
    high,
    low,
    close,
    volume: 1,
  }));
  return toCandleArrays(candles, HOUR);
}

const FLAT: [number, number, number, number] = [100, 100, 100, 100];
const NO_COSTS: ExecutionParams = {
  direction: 'long_only',
  fraction: 1,
  feeBps: 0,
  slippageBps: 0,
  stopLossPct: 0,
  takeProfitPct: 0,
  trailingStopPct: 0,
};

function run(
  rows: [number, number, number, number][],
  signals: number[],
  p: Partial<ExecutionParams>,
) {
  return simulateVariant(
    bars(rows),
    Int8Array.from(signals),
    { ...NO_COSTS, ...p },
    { detailed: true },
  );
}

describe('simulateVariant on hand-made series', () => {
  it('one long trade: fills at the next open with slippage against and fees on both sides', () => {
    const rows: [number, number, number, number][] = [
      FLAT,
      FLAT,
      [110, 110, 110, 110],
      [120, 120, 120, 120],
    ];
    const { metrics, trades } = run(rows, [1, 0, -1, 0], { feeBps: 10, slippageBps: 20 });
    const entry = 100 * 1.002;
    const exit = 120 * 0.998;
    const final = 1 - 0.001 - 1 + (exit / entry) * 0.999;
    expect(trades).toHaveLength(1);
    expect(trades[0]).toMatchObject({
      side: 'long',
      entryTime: HOUR,
      exitTime: 3 * HOUR,
      reason: 'signal',
    });
    expect(trades[0]?.entryPrice).toBeCloseTo(entry, 12);
    expect(trades[0]?.exitPrice).toBeCloseTo(exit, 12);
    expect(metrics.total_return_pct).toBeCloseTo((final - 1) * 100, 10);
    expect(trades[0]?.pnl).toBeCloseTo(final - 1, 12);
    expect(metrics).toMatchObject({ trades: 1, win_rate_pct: 100, profit_factor: null });
    // held at the close of bars 1 and 2 of 4
    expect(metrics.exposure_pct).toBe(50);
  });

  it('a stop loss exits at its level on the bar whose low reaches it', () => {
    const rows: [number, number, number, number][] = [
      FLAT,
      [100, 101, 97, 99],
      [98, 99, 90, 91],
      FLAT,
    ];
    const { metrics, trades } = run(rows, [1, 0, 0, 0], { stopLossPct: 5 });
    expect(trades).toEqual([
      expect.objectContaining({ exitTime: 2 * HOUR, exitPrice: 95, reason: 'stop' }),
    ]);
    expect(metrics.total_return_pct).toBeCloseTo(-5, 12);
    expect(metrics.max_drawdown_pct).toBeCloseTo(5, 12);
  });

  it('a gap through the stop fills at the (worse) open', () => {
    const rows: [number, number, number, number][] = [
      FLAT,
      [100, 101, 97, 99],
      [93, 94, 90, 91],
      FLAT,
    ];
    const { trades } = run(rows, [1, 0, 0, 0], { stopLossPct: 5 });
    expect(trades[0]).toMatchObject({ exitPrice: 93, reason: 'stop' });
  });

  it('a take profit exits at its level', () => {
    const rows: [number, number, number, number][] = [
      FLAT,
      [100, 105, 99, 104],
      [104, 112, 103, 111],
      FLAT,
    ];
    const { metrics, trades } = run(rows, [1, 0, 0, 0], { stopLossPct: 5, takeProfitPct: 10 });
    expect(trades[0]).toMatchObject({ exitTime: 2 * HOUR, reason: 'take_profit' });
    expect(trades[0]?.exitPrice).toBeCloseTo(110, 12);
    expect(metrics.total_return_pct).toBeCloseTo(10, 10);
  });

  it('stop and target in the same bar: the stop is assumed first (conservative)', () => {
    const rows: [number, number, number, number][] = [FLAT, FLAT, [100, 112, 90, 105], FLAT];
    const { trades } = run(rows, [1, 0, 0, 0], { stopLossPct: 5, takeProfitPct: 10 });
    expect(trades[0]).toMatchObject({ exitPrice: 95, reason: 'stop' });
  });

  it('a trailing stop follows the highest high of completed bars', () => {
    const rows: [number, number, number, number][] = [
      FLAT,
      [100, 120, 95, 118],
      [118, 119, 107, 108],
      FLAT,
    ];
    const { trades } = run(rows, [1, 0, 0, 0], { trailingStopPct: 10 });
    expect(trades[0]).toMatchObject({ exitTime: 2 * HOUR, exitPrice: 108, reason: 'trailing' });
  });

  it('long/short reverses on an opposite signal; long-only only exits', () => {
    const rows: [number, number, number, number][] = [
      FLAT,
      FLAT,
      [90, 90, 90, 90],
      [72, 72, 72, 72],
    ];
    const both = run(rows, [1, -1, 0, 0], { direction: 'long_short' });
    expect(both.trades.map((t) => [t.side, t.reason])).toEqual([
      ['long', 'signal'],
      ['short', 'end'],
    ]);
    // long 100 -> 90 leaves 0.9; short 0.9 from 90 -> 72 (+20%) ends at 1.08
    expect(both.metrics.total_return_pct).toBeCloseTo(8, 10);
    const longOnly = run(rows, [1, -1, 0, 0], {});
    expect(longOnly.trades.map((t) => [t.side, t.reason])).toEqual([['long', 'signal']]);
    expect(longOnly.metrics.total_return_pct).toBeCloseTo(-10, 10);
  });

  it('a signal on the last bar is never filled (there is no next open)', () => {
    const { trades, metrics } = run([FLAT, FLAT, FLAT], [0, 0, 1], {});
    expect(trades).toEqual([]);
    expect(metrics).toMatchObject({ trades: 0, total_return_pct: 0, sharpe: 0, exposure_pct: 0 });
  });

  it('refuses out-of-range execution parameters and mismatched signals', () => {
    expect(() => run([FLAT, FLAT], [0, 0], { fraction: 1.5 })).toThrow(/execution parameters/);
    expect(() => run([FLAT, FLAT], [0], {})).toThrow(/signals length/);
  });
});
