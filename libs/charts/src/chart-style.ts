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
import { formatAxisPrice, isIntraday, timeAxisName } from './format';

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
  /** Notes about studies the history is too short for. */
  note: '#92400e',
} as const;

/** Room for half of the first x-axis label (a centred 2020-03-02 must not be clipped). */
export const PLOT_LEFT = 40;
/** Room for the right-hand value axis labels. */
export const PLOT_RIGHT = 84;
/** Title and legend above the first pane. */
export const PLOT_TOP = 72;
/** x-axis labels and the time axis name (its time zone) under the last pane. */
export const PLOT_BOTTOM = 54;
/** From the bottom axis line to its name, below the tick labels. */
const TIME_AXIS_NAME_GAP = 30;
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

/**
 * The shared category axis (one per pane; only the bottom pane shows its labels, and under them
 * the axis name with the time zone: bars are labelled by their UTC open time).
 */
export function barAxis(
  frame: ChartFrame,
  gridIndex: number,
  showLabels: boolean,
): XAXisComponentOption {
  const name: Partial<XAXisComponentOption> = showLabels
    ? {
        name: timeAxisName(frame.timeframe),
        nameLocation: 'middle',
        nameGap: TIME_AXIS_NAME_GAP,
        nameTextStyle: { color: CHART_COLORS.muted, fontSize: 11 },
      }
    : {};
  return {
    ...name,
    type: 'category',
    gridIndex,
    data: frame.axisLabels,
    boundaryGap: true,
    axisLine: { lineStyle: { color: CHART_COLORS.axis } },
    axisTick: { show: showLabels, alignWithLabel: true },
    axisLabel: {
      show: showLabels,
      color: CHART_COLORS.muted,
      fontSize: 11,
      hideOverlap: true,
      // An intraday date-time label is wider than twice the left margin: centred on the first
      // bar it would be cut at the image edge, so it starts at its bar (or yields to the next).
      ...(isIntraday(frame.timeframe) ? { alignMinLabel: 'left' as const } : {}),
    },
    splitLine: { show: false },
  };
}

/** Average advance of a DejaVu Sans character at the note's 12 px (digits and lower case). */
const NOTE_CHAR_WIDTH = 6.5;

/**
 * Why a pane is (partly) empty, drawn inside it: centred in a pane that one study fills (RSI,
 * MACD), or boxed in the top-left corner of the price pane, whose candles stay drawn.
 */
export function paneNote(
  notes: readonly string[],
  box: PaneBox,
  chartWidth: number,
  placement: 'center' | 'corner',
): TitleComponentOption[] {
  if (notes.length === 0) return [];
  const textStyle = {
    fontSize: 12,
    fontWeight: 'normal',
    color: CHART_COLORS.note,
    lineHeight: 16,
  } as const;
  if (placement === 'corner') {
    // ECharts sizes the box from its own text metrics, narrower than DejaVu Sans as resvg draws
    // it; a width from the longest line keeps the text inside its box.
    const longest = Math.max(...notes.map((note) => note.length));
    return [
      {
        text: notes.join('\n'),
        left: PLOT_LEFT + 6,
        top: box.top + 6,
        padding: [4, 6],
        backgroundColor: 'rgba(255, 255, 255, 0.9)',
        borderColor: CHART_COLORS.split,
        borderWidth: 1,
        textStyle: { ...textStyle, width: Math.ceil(longest * NOTE_CHAR_WIDTH) },
      },
    ];
  }
  const center = PLOT_LEFT + (chartWidth - PLOT_LEFT - PLOT_RIGHT) / 2;
  return [
    {
      text: notes.join('\n'),
      left: Math.round(center),
      textAlign: 'center',
      top: Math.round(box.top + box.height / 2 - (8 * notes.length + 4)),
      textStyle,
    },
  ];
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
