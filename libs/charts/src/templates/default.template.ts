import { z } from 'zod';
import { frameRangeLabel } from '../chart-frame';
import {
  barAxis,
  CHART_COLORS,
  frameOption,
  paneGrid,
  paneLabel,
  paneLegend,
  stackPanes,
  valueAxis,
} from '../chart-style';
import { defineChartTemplate, layoutParamsShape } from '../chart-template';
import { composeDescription, describeWindow } from '../describe';
import { formatCompact, formatPercent, formatPrice } from '../format';
import { macdStudy } from '../studies/macd.study';
import { priceAxis, priceStudy, resolvePriceScale } from '../studies/price.study';
import { rsiStudy } from '../studies/rsi.study';
import { volumeStudy } from '../studies/volume.study';
import {
  bollingerParam,
  priceScaleParam,
  emaPeriodsParam,
  fastBelowSlow,
  macdShape,
  oversoldBelowOverbought,
  rsiShape,
} from './template-params';

export const DEFAULT_TEMPLATE_ID = 'ctpl_default_v1';

const params = z.strictObject({
  ...layoutParamsShape,
  emaPeriods: emaPeriodsParam.default([20, 50]),
  priceScale: priceScaleParam,
  bollinger: bollingerParam.default({ period: 20, multiplier: 2 }),
  rsi: z
    .strictObject(rsiShape)
    .refine(oversoldBelowOverbought, 'oversold must be below overbought')
    .default({ period: 14, overbought: 70, oversold: 30 }),
  macd: z
    .strictObject(macdShape)
    .refine(fastBelowSlow, 'fast must be below slow')
    .default({ fast: 12, slow: 26, signal: 9 }),
});

/** Previous close -> last close, for the headline. */
function headline(all: readonly { close: number }[]): string {
  const last = all[all.length - 1];
  const previous = all[all.length - 2];
  if (last === undefined) return '';
  const change =
    previous === undefined ? '' : ` (${formatPercent(last.close / previous.close - 1)})`;
  return `Last ${formatPrice(last.close)}${change}`;
}

/**
 * The report chart (flow 1's only request): price with EMAs and Bollinger bands, volume, RSI and
 * MACD stacked on one shared time axis, so the LLM sees trend, momentum and participation together.
 */
export const defaultChartTemplate = defineChartTemplate({
  id: DEFAULT_TEMPLATE_ID,
  kind: 'candlestick',
  summary:
    'Candles + EMA 20/50 + Bollinger(20,2) with volume, RSI(14) and MACD(12,26,9) panes on one time axis',
  defaultSize: { width: 1280, height: 960 },
  params,
  build(frame, p) {
    const [pricePane, volumePane, rsiPane, macdPane] = stackPanes(
      frame.size.height,
      [50, 11, 16, 20],
    );
    if (!pricePane || !volumePane || !rsiPane || !macdPane) throw new Error('pane layout failed');
    const scale = resolvePriceScale(frame, p.priceScale);
    const price = priceStudy(frame, {
      emaPeriods: p.emaPeriods,
      bollinger: p.bollinger,
      scale,
      xAxisIndex: 0,
      yAxisIndex: 0,
    });
    const volume = volumeStudy(frame, { xAxisIndex: 1, yAxisIndex: 1 });
    const rsi = rsiStudy(frame, p.rsi, { xAxisIndex: 2, yAxisIndex: 2 }, false);
    const macd = macdStudy(frame, p.macd, { xAxisIndex: 3, yAxisIndex: 3 });
    const base = frameOption(
      `${frame.symbol} · ${frame.timeframe} · ${frameRangeLabel(frame)}`,
      headline(frame.all.slice(0, frame.start + frame.shown.length)),
      price.legend,
      [paneLegend(macd.legend, macdPane)],
    );
    const titles = Array.isArray(base.title) ? base.title : [];
    return {
      option: {
        ...base,
        title: [
          ...titles,
          paneLabel('Volume', volumePane),
          paneLabel(`RSI ${p.rsi.period} (${p.rsi.overbought}/${p.rsi.oversold})`, rsiPane),
          paneLabel(`MACD ${p.macd.fast},${p.macd.slow},${p.macd.signal}`, macdPane),
        ],
        grid: [paneGrid(pricePane), paneGrid(volumePane), paneGrid(rsiPane), paneGrid(macdPane)],
        xAxis: [
          barAxis(frame, 0, false),
          barAxis(frame, 1, false),
          barAxis(frame, 2, false),
          barAxis(frame, 3, true),
        ],
        yAxis: [
          priceAxis(frame, scale, 0),
          valueAxis(1, formatCompact, { scale: false, splitNumber: 2 }),
          valueAxis(2, (v) => String(v), {
            scale: false,
            min: 0,
            max: 100,
            splitLine: { show: false },
            axisLabel: {
              color: CHART_COLORS.muted,
              fontSize: 11,
              customValues: [p.rsi.oversold, p.rsi.overbought],
            },
          }),
          valueAxis(3, formatCompact, { splitNumber: 2 }),
        ],
        series: [...price.series, ...volume.series, ...rsi.series, ...macd.series],
      },
      description: composeDescription(
        describeWindow(frame, scale === 'log' ? 'log price scale' : undefined),
        [...price.facts, ...volume.facts, ...rsi.facts, ...macd.facts],
        frame,
      ),
    };
  },
});
