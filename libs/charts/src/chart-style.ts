import type {
  EChartsOption,
  GridComponentOption,
  LegendComponentOption,
  TitleComponentOption,
  XAXisComponentOption,
  YAXisComponentOption,
} from 'echarts';
import { CHART_FONT_FAMILY } from './chart-font';
import type { ChartFrame } from './chart-frame';
import { formatAxisPrice } from './format';

/*
 * The house style shared by every template: white background, the bundled font, green-up /
 * red-down candles (Western convention; ECharts' default is the reverse), price axis on the right.
 */
export const CHART_COLORS = {
  text: '#1f2937',
  muted: '#6b7280',
  axis: '#9ca3af',
  split: '#eceff3',
  up: '#26a69a',
  down: '#ef5350',
  /** EMA lines in period order (fast first). */
  ema: ['#f59e0b', '#2563eb', '#db2777'],
  bollinger: '#8b5cf6',
  rsi: '#7c3aed',
  macd: '#2563eb',
  signal: '#f59e0b',
  band: 'rgba(124, 58, 237, 0.06)',
} as const;

/** Room for half of the first x-axis label (a centred 2020-03-02 must not be clipped). */
export const PLOT_LEFT = 40;
/** Room for the right-hand value axis labels. */
export const PLOT_RIGHT = 84;
/** Title and legend above the first pane. */
export const PLOT_TOP = 72;
/** x-axis labels under the last pane. */
export const PLOT_BOTTOM = 36;
/** Between panes: room for the pane's label. */
export const PANE_GAP = 30;

export interface PaneBox {
  top: number;
  height: number;
}

/** Splits the plot height into stacked panes by weight (integer pixels, deterministic). */
export function stackPanes(totalHeight: number, weights: readonly number[]): PaneBox[] {
  const available = totalHeight - PLOT_TOP - PLOT_BOTTOM - PANE_GAP * (weights.length - 1);
  const sum = weights.reduce((a, b) => a + b, 0);
  const boxes: PaneBox[] = [];
  let top = PLOT_TOP;
  for (const weight of weights) {
    const height = Math.max(40, Math.floor((available * weight) / sum));
    boxes.push({ top, height });
    top += height + PANE_GAP;
  }
  return boxes;
}

export function paneGrid(box: PaneBox): GridComponentOption {
  return { left: PLOT_LEFT, right: PLOT_RIGHT, top: box.top, height: box.height };
}

/** The pane's name drawn in its top-left corner. */
export function paneLabel(text: string, box: PaneBox): TitleComponentOption {
  return {
    text,
    left: PLOT_LEFT,
    top: box.top - 20,
    textStyle: { fontSize: 12, fontWeight: 'normal', color: CHART_COLORS.muted },
  };
}

/** The shared category axis (one per pane; only the bottom pane shows its labels). */
export function barAxis(
  frame: ChartFrame,
  gridIndex: number,
  showLabels: boolean,
): XAXisComponentOption {
  return {
    type: 'category',
    gridIndex,
    data: frame.axisLabels,
    boundaryGap: true,
    axisLine: { lineStyle: { color: CHART_COLORS.axis } },
    axisTick: { show: showLabels, alignWithLabel: true },
    axisLabel: { show: showLabels, color: CHART_COLORS.muted, fontSize: 11, hideOverlap: true },
    splitLine: { show: false },
  };
}

export function valueAxis(
  gridIndex: number,
  formatter: (value: number) => string = formatAxisPrice,
  extra: Partial<YAXisComponentOption> = {},
): YAXisComponentOption {
  return {
    type: 'value',
    gridIndex,
    position: 'right',
    scale: true,
    splitNumber: 4,
    axisLine: { show: false },
    axisTick: { show: false },
    axisLabel: { color: CHART_COLORS.muted, fontSize: 11, formatter },
    splitLine: { lineStyle: { color: CHART_COLORS.split } },
    ...extra,
  } as YAXisComponentOption;
}

/** A legend for a lower pane's lines, on the pane's label row, right-aligned. */
export function paneLegend(names: readonly string[], box: PaneBox): LegendComponentOption {
  return {
    data: [...names],
    right: PLOT_RIGHT,
    top: box.top - 20,
    itemWidth: 18,
    itemHeight: 8,
    textStyle: { fontSize: 12, color: CHART_COLORS.text },
  };
}

/** Title on the left, the latest reading on the right, legend under them (plus pane legends). */
export function frameOption(
  title: string,
  headline: string,
  legend: readonly string[],
  paneLegends: readonly LegendComponentOption[] = [],
): EChartsOption {
  return {
    backgroundColor: '#ffffff',
    animation: false,
    textStyle: { fontFamily: CHART_FONT_FAMILY, color: CHART_COLORS.text },
    title: [
      { text: title, left: PLOT_LEFT, top: 10, textStyle: { fontSize: 16, fontWeight: 'bold' } },
      {
        text: headline,
        right: PLOT_RIGHT,
        top: 12,
        textStyle: { fontSize: 13, fontWeight: 'normal', color: CHART_COLORS.text },
      },
    ],
    legend: [
      {
        show: legend.length > 0,
        data: [...legend],
        left: PLOT_LEFT,
        top: 38,
        itemWidth: 18,
        itemHeight: 8,
        textStyle: { fontSize: 12, color: CHART_COLORS.text },
      },
      ...paneLegends,
    ],
  };
}
