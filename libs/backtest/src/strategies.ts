import { BacktestParamsInvalidError } from './backtest.errors';
import type { IndicatorCache } from './indicator-cache';

/** The indicator part of a variant (stage A of a grid). */
export type StrategySpec =
  | { kind: 'ma_cross'; ma: 'ema' | 'sma'; fast: number; slow: number }
  | { kind: 'rsi_reversion'; period: number; lower: number; upper: number }
  | { kind: 'bollinger_breakout'; period: number; k: number }
  | { kind: 'macd_cross'; fast: number; slow: number; signal: number };

/**
 * Signals, one per bar, decided on that bar's CLOSE (the kernel fills them at the next open):
 * +1 = be long, -1 = be short (long-only: be flat), 0 = no opinion, keep what is held.
 * Crossover strategies emit only on the crossing bar, so after a stop the position stays flat
 * until the next crossing; level strategies (RSI, Bollinger) emit while the level holds.
 */
export type SignalArray = Int8Array;

/** Fills `out` (reused scratch, length = bars) with the strategy's signals; returns it. */
export function computeSignals(
  cache: IndicatorCache,
  spec: StrategySpec,
  out: SignalArray = new Int8Array(cache.candles.length),
): SignalArray {
  if (out.length !== cache.candles.length) {
    throw new BacktestParamsInvalidError('signal scratch length differs from the candles');
  }
  out.fill(0);
  switch (spec.kind) {
    case 'ma_cross': {
      if (spec.fast >= spec.slow)
        throw new BacktestParamsInvalidError('fast must be below slow', spec);
      const line = spec.ma === 'ema' ? cache.ema(spec.fast) : cache.sma(spec.fast);
      const base = spec.ma === 'ema' ? cache.ema(spec.slow) : cache.sma(spec.slow);
      return crossSignals(line, base, out);
    }
    case 'macd_cross': {
      const { macd, signal } = cache.macd(spec.fast, spec.slow, spec.signal);
      return crossSignals(macd, signal, out);
    }
    case 'rsi_reversion':
      if (!(spec.lower < spec.upper))
        throw new BacktestParamsInvalidError('lower must be below upper', spec);
      return rsiSignals(cache.rsi(spec.period), spec.lower, spec.upper, out);
    case 'bollinger_breakout': {
      const { upper, lower } = cache.bollinger(spec.period, spec.k);
      return breakoutSignals(cache.candles.close, upper, lower, out);
    }
  }
}

/** +1 when `line` crosses above `base` on this bar, -1 when it crosses below (NaN: no signal). */
function crossSignals(line: Float64Array, base: Float64Array, out: SignalArray): SignalArray {
  for (let i = 1; i < out.length; i++) {
    const before = (line[i - 1] as number) - (base[i - 1] as number);
    const now = (line[i] as number) - (base[i] as number);
    // NaN compares false both ways: no signal while either series warms up.
    if (before <= 0 && now > 0) out[i] = 1;
    else if (before >= 0 && now < 0) out[i] = -1;
  }
  return out;
}

/** Mean reversion: oversold (RSI < lower) → long, overbought (RSI > upper) → short / exit. */
function rsiSignals(
  rsi: Float64Array,
  lower: number,
  upper: number,
  out: SignalArray,
): SignalArray {
  for (let i = 0; i < out.length; i++) {
    const value = rsi[i] as number;
    if (value < lower) out[i] = 1;
    else if (value > upper) out[i] = -1;
  }
  return out;
}

/** Breakout: close above the upper band → long, below the lower band → short / exit. */
function breakoutSignals(
  close: Float64Array,
  upper: Float64Array,
  lower: Float64Array,
  out: SignalArray,
): SignalArray {
  for (let i = 0; i < out.length; i++) {
    const c = close[i] as number;
    if (c > (upper[i] as number)) out[i] = 1;
    else if (c < (lower[i] as number)) out[i] = -1;
  }
  return out;
}
