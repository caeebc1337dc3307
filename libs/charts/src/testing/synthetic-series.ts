import type { OhlcvCandle, Timeframe } from '@tda/contracts';
import type { ChartSeriesInput } from '../chart-frame';

const HOUR_MS = 3_600_000;
const STEP_MS: Record<Exclude<Timeframe, '1M'>, number> = {
  '1w': 168 * HOUR_MS,
  '1d': 24 * HOUR_MS,
  '4h': 4 * HOUR_MS,
  '1h': HOUR_MS,
};

/**
 * Candles from a list of closes (each bar opens at the previous close, wicks 2% out), starting at
 * 2020-01-01 00:00 UTC: shapes that real history rarely offers on demand (a parabolic rally, nine
 * bars of a new listing). The last bar can be the still-forming one.
 */
export function syntheticSeries(
  closes: readonly number[],
  timeframe: Timeframe,
  options: { symbol?: string; forming?: boolean } = {},
): ChartSeriesInput {
  const start = Date.UTC(2020, 0, 1);
  const candles = closes.map((close, i): OhlcvCandle => {
    const open = closes[i - 1] ?? close;
    const openTime =
      timeframe === '1M'
        ? new Date(Date.UTC(2020, i, 1)).toISOString()
        : new Date(start + i * STEP_MS[timeframe]).toISOString();
    const candle: OhlcvCandle = {
      openTime,
      open,
      high: Math.max(open, close) * 1.02,
      low: Math.min(open, close) * 0.98,
      close,
      volume: 1000 + i,
    };
    return options.forming === true && i === closes.length - 1
      ? { ...candle, complete: false }
      : candle;
  });
  return { symbol: options.symbol ?? 'ETH-USDT', timeframe, candles };
}

/** 40 flat bars near 100, a 14-bar rally of 35% a bar, then 6 bars of -45%: the lower Bollinger
 * band goes below zero while the shown range spans 70x (a log axis). */
export function parabolicCloses(): number[] {
  return [
    ...Array.from({ length: 40 }, (_, i) => 100 + 3 * Math.sin(i)),
    ...Array.from({ length: 14 }, (_, i) => 100 * 1.35 ** (i + 1)),
    ...Array.from({ length: 6 }, (_, i) => 100 * 1.35 ** 14 * 0.55 ** (i + 1)),
  ];
}
