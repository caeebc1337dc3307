import type { CandleArrays } from './candle-arrays';
import {
  bollingerArrays,
  emaArray,
  macdArrays,
  rsiArray,
  smaArray,
  type BollingerArrays,
  type MacdArrays,
} from './indicators';

/**
 * Indicator series of one candle set, computed once per unique parameter value and shared by every
 * variant that uses it: a grid of 10^5 variants has only a few dozen distinct series.
 */
export class IndicatorCache {
  private readonly series = new Map<string, Float64Array>();
  private readonly bands = new Map<string, BollingerArrays>();
  private readonly macds = new Map<string, MacdArrays>();

  constructor(readonly candles: CandleArrays) {}

  ema(period: number): Float64Array {
    return this.memo(this.series, `ema:${period}`, () => emaArray(this.candles.close, period));
  }

  sma(period: number): Float64Array {
    return this.memo(this.series, `sma:${period}`, () => smaArray(this.candles.close, period));
  }

  rsi(period: number): Float64Array {
    return this.memo(this.series, `rsi:${period}`, () => rsiArray(this.candles.close, period));
  }

  bollinger(period: number, k: number): BollingerArrays {
    return this.memo(this.bands, `bb:${period}:${k}`, () =>
      bollingerArrays(this.candles.close, period, k),
    );
  }

  macd(fast: number, slow: number, signal: number): MacdArrays {
    return this.memo(this.macds, `macd:${fast}:${slow}:${signal}`, () =>
      macdArrays(this.candles.close, fast, slow, signal),
    );
  }

  /** Number of distinct series computed so far (how much sharing a grid got). */
  get size(): number {
    return this.series.size + this.bands.size + this.macds.size;
  }

  private memo<T>(map: Map<string, T>, key: string, compute: () => T): T {
    const hit = map.get(key);
    if (hit !== undefined) return hit;
    const value = compute();
    map.set(key, value);
    return value;
  }
}
