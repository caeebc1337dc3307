import { z } from 'zod';
import { frameRangeLabel } from '../chart-frame';
import {
  barAxis,
  CHART_COLORS,
  frameOption,
  paneGrid,
  paneLabel,
  paneLegend,
  paneNote,
  stackPanes,
  valueAxis,
} from '../chart-style';
import type { ChartStudies } from '../chart-studies';
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

type Params = z.infer<typeof params>;

/** What this template draws: every pane below is built from these settings only. */
function studies(p: Params) {
  return {
    emaPeriods: p.emaPeriods,
    bollinger: p.bollinger,
    rsi: p.rsi,
    macd: p.macd,
  } satisfies ChartStudies;
}

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
  studies,
  build(frame, p) {
    const [pricePane, volumePane, rsiPane, macdPane] = stackPanes(
      frame.size.height,
      [50, 11, 16, 20],
    );
    if (!pricePane || !volumePane || !rsiPane || !macdPane) throw new Error('pane layout failed');
    const drawn = studies(p);
    const scale = resolvePriceScale(frame, p.priceScale);
    const price = priceStudy(frame, {
      emaPeriods: drawn.emaPeriods,
      bollinger: drawn.bollinger,
      scale,
      xAxisIndex: 0,
      yAxisIndex: 0,
    });
    const volume = volumeStudy(frame, { xAxisIndex: 1, yAxisIndex: 1 });
    const rsi = rsiStudy(frame, drawn.rsi, { xAxisIndex: 2, yAxisIndex: 2 }, false);
    const macd = macdStudy(frame, drawn.macd, { xAxisIndex: 3, yAxisIndex: 3 });
    const width = frame.size.width;
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
          paneLabel(
            `RSI ${drawn.rsi.period} (${drawn.rsi.overbought}/${drawn.rsi.oversold})`,
            rsiPane,
          ),
          paneLabel(`MACD ${drawn.macd.fast},${drawn.macd.slow},${drawn.macd.signal}`, macdPane),
          ...paneNote(price.notes, pricePane, width, 'corner'),
          ...paneNote(rsi.notes, rsiPane, width, 'center'),
          ...paneNote(macd.notes, macdPane, width, 'center'),
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
              customValues: [drawn.rsi.oversold, drawn.rsi.overbought],
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
        [...price.notes, ...rsi.notes, ...macd.notes],
      ),
    };
  },
});
