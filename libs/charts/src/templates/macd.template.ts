import { z } from 'zod';
import { frameRangeLabel } from '../chart-frame';
import { barAxis, frameOption, paneGrid, paneNote, stackPanes, valueAxis } from '../chart-style';
import type { ChartStudies } from '../chart-studies';
import { defineChartTemplate, layoutParamsShape } from '../chart-template';
import { composeDescription, describeWindow } from '../describe';
import { formatCompact } from '../format';
import { lastValue, macdSeries } from '../indicators';
import { macdStudy } from '../studies/macd.study';
import { fastBelowSlow, macdShape } from './template-params';

const params = z
  .strictObject({ ...layoutParamsShape, ...macdShape })
  .refine(fastBelowSlow, 'fast must be below slow');

/** MACD line, signal line and histogram. */
export const macdChartTemplate = defineChartTemplate({
  id: 'ctpl_macd_v1',
  kind: 'macd',
  summary: 'MACD (default 12,26,9): MACD and signal lines with the histogram',
  defaultSize: { width: 1280, height: 360 },
  params,
  studies: (p): ChartStudies => ({
    emaPeriods: [],
    macd: { fast: p.fast, slow: p.slow, signal: p.signal },
  }),
  build(frame, p) {
    const [pane] = stackPanes(frame.size.height, [1]);
    if (pane === undefined) throw new Error('pane layout failed');
    const macd = macdStudy(frame, p, { xAxisIndex: 0, yAxisIndex: 0 });
    const last = lastValue(frame.window(macdSeries(frame.allCloses, p.fast, p.slow, p.signal)));
    const base = frameOption(
      `${frame.symbol} · ${frame.timeframe} · MACD ${p.fast},${p.slow},${p.signal} · ${frameRangeLabel(frame)}`,
      last === null || last.signal === null
        ? ''
        : `MACD ${formatCompact(last.macd)} · signal ${formatCompact(last.signal)}`,
      macd.legend,
    );
    const titles = Array.isArray(base.title) ? base.title : [];
    return {
      option: {
        ...base,
        title: [...titles, ...paneNote(macd.notes, pane, frame.size.width, 'center')],
        grid: [paneGrid(pane)],
        xAxis: [barAxis(frame, 0, true)],
        yAxis: [valueAxis(0, formatCompact, { splitNumber: 3 })],
        series: macd.series,
      },
      description: composeDescription(describeWindow(frame), macd.facts, frame, macd.notes),
    };
  },
});
