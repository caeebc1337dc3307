import { describe, expect, it } from 'vitest';
import { toCandleArrays, type CandleLike } from './candle-arrays';
import { IndicatorCache } from './indicator-cache';
import { simulateVariant, type ExecutionParams, type Trade } from './simulate';
import { computeSignals, type StrategySpec } from './strategies';
import { HOUR_MS, loadBundledBtc1h } from './testing/bundled-candles';

const real = loadBundledBtc1h();

/** The same history up to bar t, a different (still well-formed) future after it. */
function alteredAfter(t: number): CandleLike[] {
  return real.map((c, i) =>
    i <= t
      ? c
      : {
          ...c,
          open: c.open * (i % 2 === 0 ? 1.07 : 0.93),
          high: c.high * 1.1,
          low: c.low * 0.85,
          close: c.close * (i % 3 === 0 ? 0.9 : 1.05),
        },
  );
}

const EXECUTION: ExecutionParams = {
  direction: 'long_short',
  fraction: 1,
  feeBps: 10,
  slippageBps: 5,
  stopLossPct: 2,
  takeProfitPct: 3,
  trailingStopPct: 1.5,
};

const SPECS: StrategySpec[] = [
  { kind: 'ma_cross', ma: 'ema', fast: 9, slow: 21 },
  { kind: 'rsi_reversion', period: 14, lower: 30, upper: 70 },
  { kind: 'bollinger_breakout', period: 20, k: 2 },
  { kind: 'macd_cross', fast: 12, slow: 26, signal: 9 },
];

function runOn(candles: CandleLike[], spec: StrategySpec) {
  const arrays = toCandleArrays(candles, HOUR_MS);
  const signals = computeSignals(new IndicatorCache(arrays), spec);
  return {
    signals,
    trades: simulateVariant(arrays, signals, EXECUTION, { detailed: true }).trades,
  };
}

describe('no look-ahead: the future after bar t changes nothing decided by then', () => {
  for (const spec of SPECS) {
    it(`${spec.kind}: signals up to t and trades closed by t are identical`, () => {
      const full = runOn(real, spec);
      for (const t of [300, 1800, 4000]) {
        const altered = runOn(alteredAfter(t), spec);
        expect(Array.from(altered.signals.subarray(0, t + 1))).toEqual(
          Array.from(full.signals.subarray(0, t + 1)),
        );
        const cutoff = (real[t] as CandleLike).openTime;
        const closedBy = (trades: Trade[]) => trades.filter((x) => x.exitTime <= cutoff);
        expect(closedBy(full.trades).length).toBeGreaterThan(0);
        expect(closedBy(altered.trades)).toEqual(closedBy(full.trades));
        // The decision filled at bar t+1's open (side and time) is known at bar t's close.
        const next = (real[t + 1] as CandleLike).openTime;
        const enteredAt = (trades: Trade[]) =>
          trades.filter((x) => x.entryTime <= next).map((x) => [x.side, x.entryTime]);
        expect(enteredAt(altered.trades)).toEqual(enteredAt(full.trades));
      }
    });
  }

  it('the check can fail: a strategy peeking one bar ahead is caught', () => {
    const t = 1800;
    const peek = (candles: CandleLike[]) =>
      candles.map((c, i) => ((candles[i + 1]?.close ?? c.close) > c.close ? 1 : -1));
    expect(peek(alteredAfter(t)).slice(0, t + 1)).not.toEqual(peek(real).slice(0, t + 1));
  });
});
