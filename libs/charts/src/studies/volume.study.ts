import type { BarSeriesOption } from 'echarts';
import type { ChartFrame } from '../chart-frame';
import { CHART_COLORS } from '../chart-style';
import { formatCompact } from '../format';
import type { PaneAxes, StudyResult } from './study';

/** Bars averaged for the "x times the average volume" clause. */
const VOLUME_AVERAGE_BARS = 20;

function translucent(hex: string): string {
  return `${hex}99`;
}

/** Volume bars coloured like their candle. */
export function volumeStudy(frame: ChartFrame, axes: PaneAxes): StudyResult {
  const bars: BarSeriesOption = {
    type: 'bar',
    name: 'Volume',
    ...axes,
    barMaxWidth: 16,
    data: frame.shown.map((c) => ({
      value: c.volume,
      itemStyle: {
        color: translucent(c.close >= c.open ? CHART_COLORS.up : CHART_COLORS.down),
        opacity: c.complete === false ? 0.45 : 1,
      },
    })),
  };
  const facts: string[] = [];
  const last = frame.shown[frame.shown.length - 1];
  const recent = frame.all.slice(
    Math.max(0, frame.all.length - 1 - VOLUME_AVERAGE_BARS),
    frame.all.length - 1,
  );
  if (last !== undefined && last.complete === false) {
    // A forming bar's volume is partial: comparing it with full bars would read as a collapse.
    facts.push(`last volume ${formatCompact(last.volume)} (partial bar)`);
  } else if (last !== undefined && recent.length > 0) {
    const average = recent.reduce((sum, c) => sum + c.volume, 0) / recent.length;
    const ratio =
      average === 0
        ? ''
        : `, ${(last.volume / average).toFixed(1)}x the ${recent.length}-bar average`;
    facts.push(`last volume ${formatCompact(last.volume)}${ratio}`);
  }
  return { series: [bars], legend: [], facts, notes: [] };
}
