import { z } from 'zod';
import { frameRangeLabel } from '../chart-frame';
import {
  barAxis,
  CHART_COLORS,
  frameOption,
  paneGrid,
  paneNote,
  stackPanes,
  valueAxis,
} from '../chart-style';
import type { ChartStudies } from '../chart-studies';
import { defineChartTemplate, layoutParamsShape } from '../chart-template';
import { composeDescription, describeWindow } from '../describe';
import { formatFixed } from '../format';
import { lastValue, rsiSeries } from '../indicators';
import { rsiStudy } from '../studies/rsi.study';
import { oversoldBelowOverbought, rsiShape } from './template-params';

const params = z
  .strictObject({ ...layoutParamsShape, ...rsiShape })
  .refine(oversoldBelowOverbought, 'oversold must be below overbought');

/** RSI alone, with its overbought/oversold band, for a focused momentum read. */
export const rsiChartTemplate = defineChartTemplate({
  id: 'ctpl_rsi_v1',
  kind: 'rsi',
  summary: 'RSI (default 14) with overbought/oversold guides (default 70/30)',
  defaultSize: { width: 1280, height: 360 },
  params,
  studies: (p): ChartStudies => ({
    emaPeriods: [],
    rsi: { period: p.period, overbought: p.overbought, oversold: p.oversold },
  }),
  build(frame, p) {
    const [pane] = stackPanes(frame.size.height, [1]);
    if (pane === undefined) throw new Error('pane layout failed');
    const rsi = rsiStudy(frame, p, { xAxisIndex: 0, yAxisIndex: 0 }, true);
    const last = lastValue(frame.window(rsiSeries(frame.allCloses, p.period)));
    const base = frameOption(
      `${frame.symbol} · ${frame.timeframe} · RSI ${p.period} (${p.overbought}/${p.oversold}) · ${frameRangeLabel(frame)}`,
      last === null ? '' : `RSI ${formatFixed(last, 1)}`,
      [],
    );
    const titles = Array.isArray(base.title) ? base.title : [];
    return {
      option: {
        ...base,
        title: [...titles, ...paneNote(rsi.notes, pane, frame.size.width, 'center')],
        grid: [paneGrid(pane)],
        xAxis: [barAxis(frame, 0, true)],
        yAxis: [
          valueAxis(0, (v) => String(v), {
            scale: false,
            min: 0,
            max: 100,
            splitLine: { show: false },
            axisLabel: {
              color: CHART_COLORS.muted,
              fontSize: 11,
              customValues: [0, p.oversold, 50, p.overbought, 100],
            },
          }),
        ],
        series: rsi.series,
      },
      description: composeDescription(describeWindow(frame), rsi.facts, frame, rsi.notes),
    };
  },
});
