import { z } from 'zod';
import { frameRangeLabel } from '../chart-frame';
import {
  barAxis,
  frameOption,
  paneGrid,
  paneLabel,
  paneNote,
  stackPanes,
  valueAxis,
} from '../chart-style';
import type { ChartStudies } from '../chart-studies';
import { defineChartTemplate, layoutParamsShape } from '../chart-template';
import { composeDescription, describeWindow } from '../describe';
import { formatCompact, formatPercent, formatPrice } from '../format';
import { priceAxis, priceStudy, resolvePriceScale } from '../studies/price.study';
import { volumeStudy } from '../studies/volume.study';
import { bollingerParam, emaPeriodsParam, priceScaleParam } from './template-params';

const params = z.strictObject({
  ...layoutParamsShape,
  emaPeriods: emaPeriodsParam.default([20, 50]),
  priceScale: priceScaleParam,
  volumePane: z.boolean().default(true),
  /** Off unless asked for: this template is the uncluttered price view. */
  bollinger: bollingerParam.optional(),
});

/** What this template draws: EMA lines, and Bollinger bands only when asked for. */
function studies(p: z.infer<typeof params>): ChartStudies {
  return { emaPeriods: p.emaPeriods, bollinger: p.bollinger };
}

/** Candles with EMA lines (optionally Bollinger bands) and a volume pane. */
export const priceEmaChartTemplate = defineChartTemplate({
  id: 'ctpl_price_ema_v1',
  kind: 'candlestick',
  summary: 'Candles + EMA lines (default 20/50), optional Bollinger bands, optional volume pane',
  defaultSize: { width: 1280, height: 720 },
  params,
  studies,
  build(frame, p) {
    const panes = stackPanes(frame.size.height, p.volumePane ? [78, 22] : [1]);
    const [pricePane, volumePane] = panes;
    if (pricePane === undefined) throw new Error('pane layout failed');
    const drawn = studies(p);
    const scale = resolvePriceScale(frame, p.priceScale);
    const price = priceStudy(frame, {
      emaPeriods: drawn.emaPeriods,
      bollinger: drawn.bollinger,
      scale,
      xAxisIndex: 0,
      yAxisIndex: 0,
    });
    const volume =
      volumePane === undefined ? undefined : volumeStudy(frame, { xAxisIndex: 1, yAxisIndex: 1 });
    const last = frame.shown[frame.shown.length - 1];
    const previous = frame.all[frame.start + frame.shown.length - 2];
    const change =
      last === undefined || previous === undefined
        ? ''
        : ` (${formatPercent(last.close / previous.close - 1)})`;
    const base = frameOption(
      `${frame.symbol} · ${frame.timeframe} · ${frameRangeLabel(frame)}`,
      last === undefined ? '' : `Last ${formatPrice(last.close)}${change}`,
      price.legend,
    );
    const titles = [
      ...(Array.isArray(base.title) ? base.title : []),
      ...paneNote(price.notes, pricePane, frame.size.width, 'corner'),
    ];
    return {
      option: {
        ...base,
        title: volumePane === undefined ? titles : [...titles, paneLabel('Volume', volumePane)],
        grid: panes.map(paneGrid),
        xAxis: panes.map((_, index) => barAxis(frame, index, index === panes.length - 1)),
        yAxis:
          volumePane === undefined
            ? [priceAxis(frame, scale, 0)]
            : [
                priceAxis(frame, scale, 0),
                valueAxis(1, formatCompact, { scale: false, splitNumber: 2 }),
              ],
        series: [...price.series, ...(volume?.series ?? [])],
      },
      description: composeDescription(
        describeWindow(frame, scale === 'log' ? 'log price scale' : undefined),
        [...price.facts, ...(volume?.facts ?? [])],
        frame,
        price.notes,
      ),
    };
  },
});
