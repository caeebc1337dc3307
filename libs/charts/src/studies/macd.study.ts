import type { BarSeriesOption, LineSeriesOption } from 'echarts';
import type { ChartFrame } from '../chart-frame';
import { CHART_COLORS } from '../chart-style';
import { formatBarTime, formatFixed, formatPrice } from '../format';
import { macdBarsNeeded, macdName, shortfallNote, type MacdSettings } from '../chart-studies';
import { macdSeries } from '../indicators';
import { toChartValues, type PaneAxes, type StudyResult } from './study';

/** MACD reads in price units; two decimals matter only for cheap assets. */
function formatMacd(value: number): string {
  return Math.abs(value) >= 100 ? formatFixed(value, 0) : formatPrice(value);
}

/** Histogram + MACD and signal lines; facts: last readings, histogram sign and its streak, last cross. */
export function macdStudy(frame: ChartFrame, settings: MacdSettings, axes: PaneAxes): StudyResult {
  const points = frame.window(
    macdSeries(frame.allCloses, settings.fast, settings.slow, settings.signal),
  );
  const histogram: BarSeriesOption = {
    type: 'bar',
    name: 'Histogram',
    ...axes,
    barMaxWidth: 12,
    data: points.map((p) =>
      p === null || p.histogram === null
        ? '-'
        : {
            value: p.histogram,
            itemStyle: { color: p.histogram >= 0 ? CHART_COLORS.up : CHART_COLORS.down },
          },
    ),
  };
  const line = (name: string, values: (number | null)[], color: string): LineSeriesOption => ({
    type: 'line',
    name,
    ...axes,
    data: toChartValues(values),
    showSymbol: false,
    lineStyle: { width: 1.5, color },
    itemStyle: { color },
  });
  const series = [
    histogram,
    line(
      'MACD',
      points.map((p) => p?.macd ?? null),
      CHART_COLORS.macd,
    ),
    line(
      'Signal',
      points.map((p) => p?.signal ?? null),
      CHART_COLORS.signal,
    ),
  ];
  const label = macdName(settings);
  const lastIndex = points.length - 1;
  const last = points[lastIndex];
  if (last === undefined || last === null || last.signal === null || last.histogram === null) {
    const note = shortfallNote({
      study: label,
      needed: macdBarsNeeded(settings),
      available: frame.all.length,
    });
    return { series, legend: ['MACD', 'Signal'], facts: [note], notes: [note] };
  }
  const positive = last.histogram >= 0;
  let streak = 0;
  let crossIndex = -1;
  for (let i = lastIndex; i >= 0; i -= 1) {
    const h = points[i]?.histogram;
    if (h === null || h === undefined) break;
    if (h >= 0 !== positive) {
      crossIndex = i + 1;
      break;
    }
    streak += 1;
  }
  const crossCandle = crossIndex >= 0 ? frame.shown[crossIndex] : undefined;
  const cross =
    crossCandle === undefined
      ? ''
      : `, ${positive ? 'bullish' : 'bearish'} cross at ${formatBarTime(crossCandle.openTime, frame.timeframe)}`;
  return {
    series,
    legend: ['MACD', 'Signal'],
    notes: [],
    facts: [
      `${label} ${formatMacd(last.macd)} ${last.macd >= last.signal ? 'above' : 'below'} signal ${formatMacd(last.signal)}, histogram ${positive ? 'positive' : 'negative'} for ${streak} bar${streak === 1 ? '' : 's'}${cross}`,
    ],
  };
}
