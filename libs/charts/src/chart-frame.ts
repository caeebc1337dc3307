import type { OhlcvCandle, Timeframe } from '@tda/contracts';
import { formatAxisTime, formatBarTime, isIntraday } from './format';
import type { ChartSize } from './svg-rasterizer';

/** What a chart is drawn from: one symbol's candles at one timeframe, ascending openTime. */
export interface ChartSeriesInput {
  symbol: string;
  timeframe: Timeframe;
  candles: readonly OhlcvCandle[];
}

/**
 * One rendering attempt's view of the data. Indicators are computed over ALL candles (so EMA 50
 * is warmed up even when only the last 40 bars are drawn) and then cut to the shown window.
 */
export interface ChartFrame {
  symbol: string;
  timeframe: Timeframe;
  /** Every candle, for indicator warm-up. */
  all: readonly OhlcvCandle[];
  allCloses: readonly number[];
  /** Index in `all` of the first shown bar. */
  start: number;
  /** The shown candles (`all.slice(start)`). */
  shown: readonly OhlcvCandle[];
  /** x-axis tick labels of the shown bars. */
  axisLabels: string[];
  size: ChartSize;
  /** Cuts a series aligned with `all` to the shown window. */
  window<T>(series: readonly T[]): T[];
}

export function createChartFrame(
  input: ChartSeriesInput,
  size: ChartSize,
  bars: number,
): ChartFrame {
  const all = input.candles;
  const start = Math.max(0, all.length - Math.max(1, Math.floor(bars)));
  const shown = all.slice(start);
  return {
    symbol: input.symbol,
    timeframe: input.timeframe,
    all,
    allCloses: all.map((c) => c.close),
    start,
    shown,
    axisLabels: shown.map((c) => formatAxisTime(c.openTime, input.timeframe)),
    size,
    window: <T>(series: readonly T[]) => series.slice(start),
  };
}

/**
 * '2020-03..2025-02' for the shown bars; intraday ranges name their zone
 * ('2026-01-05 08:00..2026-01-12 20:00 UTC'), in the chart title and the description alike.
 */
export function frameRangeLabel(frame: ChartFrame): string {
  const first = frame.shown[0];
  const last = frame.shown[frame.shown.length - 1];
  if (first === undefined || last === undefined) return 'no bars';
  const from = formatBarTime(first.openTime, frame.timeframe);
  const to = formatBarTime(last.openTime, frame.timeframe);
  const zone = isIntraday(frame.timeframe) ? ' UTC' : '';
  return `${from === to ? from : `${from}..${to}`}${zone}`;
}

/** True when the last shown candle is the still-forming bucket (incompleteBucketPolicy 'marked'). */
export function lastBarForming(frame: ChartFrame): boolean {
  return frame.shown[frame.shown.length - 1]?.complete === false;
}
