import type { CandlestickSeriesOption, LineSeriesOption, YAXisComponentOption } from 'echarts';
import type { ChartFrame } from '../chart-frame';
import { CHART_COLORS, valueAxis } from '../chart-style';
import { formatAxisPrice, formatBarTime, formatPercent, formatPrice } from '../format';
import {
  bollingerBarsNeeded,
  bollingerName,
  emaBarsNeeded,
  emaName,
  shortfallNote,
  type BollingerSettings,
} from '../chart-studies';
import { bollingerSeries, emaSeries, lastValue, type BollingerPoint } from '../indicators';
import { toChartValues, type PaneAxes, type StudyResult } from './study';

export type PriceScale = 'linear' | 'log';
export type PriceScaleParam = PriceScale | 'auto';

export interface PriceStudyOptions extends PaneAxes {
  emaPeriods: readonly number[];
  bollinger?: BollingerSettings | undefined;
  scale: PriceScale;
}

/** 'auto' picks a log axis when the shown range spans this factor: a 10x move on a linear axis
 * flattens the early bars into a line. */
const AUTO_LOG_RATIO = 10;

function shownExtent(frame: ChartFrame): { low: number; high: number } {
  let low = Number.POSITIVE_INFINITY;
  let high = Number.NEGATIVE_INFINITY;
  for (const c of frame.shown) {
    low = Math.min(low, c.low);
    high = Math.max(high, c.high);
  }
  return { low, high };
}

export function resolvePriceScale(frame: ChartFrame, param: PriceScaleParam): PriceScale {
  if (param !== 'auto') return param;
  const { low, high } = shownExtent(frame);
  return low > 0 && high / low >= AUTO_LOG_RATIO ? 'log' : 'linear';
}

/** The log price axis range: the candles' extent with 10% room, 3 significant digits. */
export function logAxisRange(frame: ChartFrame): { min: number; max: number } {
  const { low, high } = shownExtent(frame);
  return { min: Number((low * 0.9).toPrecision(3)), max: Number((high * 1.1).toPrecision(3)) };
}

/** 1, 2, 2.5 or 5 times a power of ten, at least `raw`. */
function niceStep(raw: number): number {
  if (!(raw > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(raw));
  const fraction = raw / power;
  const nice =
    fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 2.5 ? 2.5 : fraction <= 5 ? 5 : 10;
  return Number((nice * power).toPrecision(12));
}

/** 1-2-5 values of each decade inside [min, max]. */
export function logTicks(min: number, max: number): number[] {
  const ticks: number[] = [];
  if (!(min > 0) || !(max > min)) return ticks;
  for (let power = Math.floor(Math.log10(min)); 10 ** power <= max; power += 1) {
    for (const mantissa of [1, 2, 5]) {
      const value = Number((mantissa * 10 ** power).toPrecision(12));
      if (value >= min && value <= max) ticks.push(value);
    }
  }
  return ticks;
}

/**
 * The price axis is scaled to the CANDLES, not to the overlays: a Bollinger band that swings
 * below zero after a 10x rally must not squash the candles (it is clipped at the pane edge).
 */
export function priceAxis(
  frame: ChartFrame,
  scale: PriceScale,
  gridIndex: number,
): YAXisComponentOption {
  const { low, high } = shownExtent(frame);
  if (!Number.isFinite(low) || !Number.isFinite(high)) return valueAxis(gridIndex);
  if (scale === 'log') {
    const { min, max } = logAxisRange(frame);
    // ECharts puts log ticks only on powers of ten (two labels for 900..69,000); 1-2-5 steps read
    // like a trading terminal's log axis.
    const ticks = logTicks(min, max);
    return valueAxis(gridIndex, formatAxisPrice, {
      type: 'log',
      logBase: 10,
      min,
      max,
      axisTick: { show: false, customValues: ticks },
      axisLabel: {
        color: CHART_COLORS.muted,
        fontSize: 11,
        formatter: formatAxisPrice,
        customValues: ticks,
      },
    });
  }
  const span = high - low;
  const step = niceStep(span > 0 ? span / 4 : Math.max(Math.abs(high), 1) / 4);
  const min = Math.max(
    low >= 0 ? 0 : Number.NEGATIVE_INFINITY,
    Math.floor((low - span * 0.04) / step) * step,
  );
  const max = Math.ceil((high + span * 0.04) / step) * step;
  return valueAxis(gridIndex, formatAxisPrice, { min, max, interval: step });
}

/** Opacity of the still-forming last candle, so it reads as provisional. */
const FORMING_OPACITY = 0.45;

function candleSeries(frame: ChartFrame, axes: PaneAxes): CandlestickSeriesOption {
  const last = frame.shown[frame.shown.length - 1];
  return {
    type: 'candlestick',
    name: 'Price',
    ...axes,
    barMaxWidth: 16,
    itemStyle: {
      color: CHART_COLORS.up,
      color0: CHART_COLORS.down,
      borderColor: CHART_COLORS.up,
      borderColor0: CHART_COLORS.down,
    },
    data: frame.shown.map((c) => {
      const value = [c.open, c.close, c.low, c.high];
      return c.complete === false ? { value, itemStyle: { opacity: FORMING_OPACITY } } : value;
    }),
    markLine:
      last === undefined
        ? undefined
        : {
            silent: true,
            symbol: ['none', 'none'],
            lineStyle: { type: 'dashed', width: 1, color: CHART_COLORS.muted },
            // The last close sits on the price axis, as on a trading terminal.
            label: {
              position: 'end',
              formatter: formatAxisPrice(last.close),
              color: '#ffffff',
              backgroundColor: last.close >= last.open ? CHART_COLORS.up : CHART_COLORS.down,
              padding: [2, 4],
              fontSize: 11,
            },
            data: [{ yAxis: last.close }],
          },
  };
}

/*
 * On a log axis an overlay below the axis floor (a lower Bollinger band after a 10x rally, which
 * can go below zero) is drawn at a tenth of the floor: the line leaves the pane at its bottom edge
 * and is clipped there (series clip to their grid), then comes back where the value does. Leaving
 * a gap instead made the band stop in mid-air and reappear from nowhere; a value <= 0 has no
 * place on a log axis at all, and a tiny positive one sent the path far off the image. The axis
 * stays fitted to the candles: switching the pane to linear would flatten the early bars of the
 * rally into a line to make room for an overlay, which is the wrong trade for a price chart.
 */
const LOG_CLIP_FACTOR = 0.1;

function drawableValues(
  values: readonly (number | null)[],
  logFloor: number | undefined,
): (number | null)[] {
  if (logFloor === undefined) return [...values];
  return values.map((v) => (v === null ? null : v < logFloor ? logFloor * LOG_CLIP_FACTOR : v));
}

function lineSeries(
  name: string,
  values: readonly (number | null)[],
  color: string,
  axes: PaneAxes,
  logFloor: number | undefined,
  dashed = false,
): LineSeriesOption {
  return {
    type: 'line',
    name,
    ...axes,
    data: toChartValues(drawableValues(values, logFloor)),
    showSymbol: false,
    connectNulls: false,
    clip: true,
    lineStyle: { width: 1.5, color, type: dashed ? 'dashed' : 'solid' },
    itemStyle: { color },
  };
}

function priceFacts(frame: ChartFrame): string[] {
  const shown = frame.shown;
  const last = shown[shown.length - 1];
  const first = shown[0];
  if (last === undefined || first === undefined) return [];
  const previous = frame.all[frame.start + shown.length - 2];
  const change =
    previous === undefined
      ? ''
      : `${formatPercent(last.close / previous.close - 1)} vs prior bar, `;
  let high = first;
  let low = first;
  for (const candle of shown) {
    if (candle.high > high.high) high = candle;
    if (candle.low < low.low) low = candle;
  }
  return [
    `last close ${formatPrice(last.close)} (${change}${formatPercent(last.close / first.open - 1)} over the window)`,
    `window high ${formatPrice(high.high)} (${formatBarTime(high.openTime, frame.timeframe)}), low ${formatPrice(low.low)} (${formatBarTime(low.openTime, frame.timeframe)})`,
  ];
}

/** 'close above EMA20 (37,872), above EMA50 (24,601)' over the EMAs that have a reading. */
function emaFact(close: number, readings: readonly { period: number; value: number }[]): string {
  const parts = readings.map(
    ({ period, value }) =>
      `${close >= value ? 'above' : 'below'} EMA${period} (${formatPrice(value)})`,
  );
  return `close ${parts.join(', ')}`;
}

/** 'Bollinger(20,2) 4,938-69,301, ...'; a band below zero is spelled out (a '-' would read as a range). */
function bollingerFact(
  settings: BollingerSettings,
  reading: BollingerPoint,
  close: number,
  logFloor: number | undefined,
): string {
  const span = reading.upper - reading.lower;
  const width = span / reading.middle;
  const position = span === 0 ? 0.5 : (close - reading.lower) / span;
  const range =
    reading.lower < 0
      ? `lower ${formatPrice(reading.lower)} (below zero), upper ${formatPrice(reading.upper)}`
      : `${formatPrice(reading.lower)}-${formatPrice(reading.upper)}`;
  // Below zero says it all; a positive band under the log axis floor is drawn cut at the edge.
  const clipped =
    logFloor !== undefined && reading.lower >= 0 && reading.lower < logFloor
      ? ' (lower band under the axis)'
      : '';
  return `${bollingerName(settings)} ${range}${clipped}, width ${(width * 100).toFixed(1)}%, close at ${(position * 100).toFixed(0)}% of the band`;
}

function bollingerBands(
  frame: ChartFrame,
  bb: BollingerSettings,
  axes: PaneAxes,
  logFloor: number | undefined,
): { series: LineSeriesOption[]; fact: string; note: string | undefined } {
  const bands = frame.window(bollingerSeries(frame.allCloses, bb.period, bb.multiplier));
  const name = `BB ${bb.period},${bb.multiplier}`;
  const band = (pick: (b: BollingerPoint) => number, dashed: boolean): LineSeriesOption =>
    lineSeries(
      name,
      bands.map((b) => (b === null ? null : pick(b))),
      CHART_COLORS.bollinger,
      axes,
      logFloor,
      dashed,
    );
  const series = [
    band((b) => b.upper, true),
    band((b) => b.middle, false),
    band((b) => b.lower, true),
  ];
  const reading = lastValue(bands);
  const lastClose = frame.shown[frame.shown.length - 1]?.close;
  if (reading === null || lastClose === undefined) {
    const note = shortfallNote({
      study: bollingerName(bb),
      needed: bollingerBarsNeeded(bb),
      available: frame.all.length,
    });
    return { series, fact: note, note };
  }
  return { series, fact: bollingerFact(bb, reading, lastClose, logFloor), note: undefined };
}

/** Candles, EMAs and optionally Bollinger bands over the price pane. */
export function priceStudy(frame: ChartFrame, options: PriceStudyOptions): StudyResult {
  const axes: PaneAxes = { xAxisIndex: options.xAxisIndex, yAxisIndex: options.yAxisIndex };
  const logFloor = options.scale === 'log' ? logAxisRange(frame).min : undefined;
  const series: StudyResult['series'] = [candleSeries(frame, axes)];
  const legend: string[] = [];
  const facts = priceFacts(frame);
  const notes: string[] = [];
  const lastClose = frame.shown[frame.shown.length - 1]?.close;
  const available = frame.all.length;

  const emaReadings: { period: number; value: number }[] = [];
  const emaNotes: string[] = [];
  options.emaPeriods.forEach((period, index) => {
    const values = emaSeries(frame.allCloses, period);
    const name = `EMA ${period}`;
    const color = CHART_COLORS.ema[index % CHART_COLORS.ema.length] ?? CHART_COLORS.muted;
    series.push(lineSeries(name, frame.window(values), color, axes, logFloor));
    legend.push(name);
    const value = lastValue(frame.window(values));
    if (value !== null) emaReadings.push({ period, value });
    else
      emaNotes.push(
        shortfallNote({ study: emaName(period), needed: emaBarsNeeded(period), available }),
      );
  });
  if (lastClose !== undefined && emaReadings.length > 0)
    facts.push(emaFact(lastClose, emaReadings));
  facts.push(...emaNotes);
  notes.push(...emaNotes);

  if (options.bollinger !== undefined) {
    const bands = bollingerBands(frame, options.bollinger, axes, logFloor);
    series.push(...bands.series);
    legend.push(`BB ${options.bollinger.period},${options.bollinger.multiplier}`);
    facts.push(bands.fact);
    if (bands.note !== undefined) notes.push(bands.note);
  }
  return { series, legend, facts, notes };
}
