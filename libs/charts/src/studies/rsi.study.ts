import type { LineSeriesOption } from 'echarts';
import type { ChartFrame } from '../chart-frame';
import { CHART_COLORS } from '../chart-style';
import { formatBarTime, formatFixed } from '../format';
import { rsiBarsNeeded, rsiName, shortfallNote, type RsiSettings } from '../chart-studies';
import { lastValue, rsiSeries } from '../indicators';
import { toChartValues, type PaneAxes, type StudyResult } from './study';

function zone(value: number, settings: RsiSettings): string {
  if (value >= settings.overbought) return 'overbought';
  if (value <= settings.oversold) return 'oversold';
  return 'neutral';
}

/** RSI line with overbought/oversold guides; facts: last reading, zone, window extremes. */
export function rsiStudy(
  frame: ChartFrame,
  settings: RsiSettings,
  axes: PaneAxes,
  detailed: boolean,
): StudyResult {
  const values = frame.window(rsiSeries(frame.allCloses, settings.period));
  const line: LineSeriesOption = {
    type: 'line',
    name: `RSI ${settings.period}`,
    ...axes,
    data: toChartValues(values),
    showSymbol: false,
    lineStyle: { width: 1.5, color: CHART_COLORS.rsi },
    itemStyle: { color: CHART_COLORS.rsi },
    markLine: {
      silent: true,
      symbol: ['none', 'none'],
      label: { show: false },
      lineStyle: { type: 'dashed', width: 1, color: CHART_COLORS.axis },
      data: [{ yAxis: settings.overbought }, { yAxis: settings.oversold }],
    },
    markArea: {
      silent: true,
      itemStyle: { color: CHART_COLORS.band },
      data: [[{ yAxis: settings.oversold }, { yAxis: settings.overbought }]],
    },
  };
  const label = rsiName(settings);
  const last = lastValue(values);
  if (last === null) {
    const note = shortfallNote({
      study: label,
      needed: rsiBarsNeeded(settings),
      available: frame.all.length,
    });
    return { series: [line], legend: [], facts: [note], notes: [note] };
  }
  let fact = `${label} ${formatFixed(last, 1)} (${zone(last, settings)})`;
  if (detailed) {
    let maxIndex = -1;
    let minIndex = -1;
    let overbought = 0;
    let oversold = 0;
    values.forEach((value, index) => {
      if (value === null) return;
      const max = values[maxIndex];
      const min = values[minIndex];
      if (max === undefined || max === null || value > max) maxIndex = index;
      if (min === undefined || min === null || value < min) minIndex = index;
      if (value >= settings.overbought) overbought += 1;
      if (value <= settings.oversold) oversold += 1;
    });
    const at = (index: number): string => {
      const candle = frame.shown[index];
      return candle === undefined ? '?' : formatBarTime(candle.openTime, frame.timeframe);
    };
    fact +=
      `; window max ${formatFixed(values[maxIndex] ?? Number.NaN, 1)} (${at(maxIndex)}), ` +
      `min ${formatFixed(values[minIndex] ?? Number.NaN, 1)} (${at(minIndex)}); ` +
      `${overbought} bars at or above ${settings.overbought}, ${oversold} at or below ${settings.oversold}`;
  }
  return { series: [line], legend: [], facts: [fact], notes: [] };
}
