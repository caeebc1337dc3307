import type { EChartsOption } from 'echarts';
import { z } from 'zod';
import { ChartParamsError } from './charts.errors';
import type { ChartFrame } from './chart-frame';
import type { ChartStudies } from './chart-studies';
import type { ChartSize } from './svg-rasterizer';

/** Shown bars when a request does not say: beyond this candles get thinner than a few pixels. */
export const DEFAULT_MAX_BARS = 300;
export const MIN_CHART_WIDTH = 320;
export const MAX_CHART_WIDTH = 2560;
export const MIN_CHART_HEIGHT = 240;
export const MAX_CHART_HEIGHT = 2560;

/** Params every template accepts: image size and how many of the last bars to draw. */
export const layoutParamsShape = {
  width: z.number().int().min(MIN_CHART_WIDTH).max(MAX_CHART_WIDTH).optional(),
  height: z.number().int().min(MIN_CHART_HEIGHT).max(MAX_CHART_HEIGHT).optional(),
  bars: z.number().int().min(2).max(5000).optional(),
};

export interface LayoutParams {
  width?: number | undefined;
  height?: number | undefined;
  bars?: number | undefined;
}

/** What a template draws for one frame: the ECharts option and the factual text for the LLM. */
export interface ChartDrawing {
  option: EChartsOption;
  description: string;
}

/** How a template is written: typed params (zod, strict) and one pure build function. */
export interface ChartTemplateDefinition<P extends LayoutParams> {
  /** Versioned, storage-safe id (it is part of the PNG object name): ctpl_<name>_v<N>. */
  id: string;
  /** ChartKind recorded in the manifest (candlestick, rsi, macd...). */
  kind: string;
  /** One line for listings and READMEs. */
  summary: string;
  defaultSize: ChartSize;
  params: z.ZodType<P>;
  /**
   * The indicators `build` draws for these params (what a report on this chart may quote);
   * omitted by a template that draws none.
   */
  studies?(params: P): ChartStudies;
  /** Pure and deterministic: same frame and params, same option and description. */
  build(frame: ChartFrame, params: P): ChartDrawing;
}

/** A template with its params already validated: what the renderer works with. */
export interface BoundChart {
  readonly chartTemplateId: string;
  readonly kind: string;
  readonly size: ChartSize;
  /** Requested number of shown bars; undefined = all candles up to DEFAULT_MAX_BARS. */
  readonly bars: number | undefined;
  /** The indicators this chart draws (EMA periods, Bollinger, RSI, MACD settings). */
  readonly studies: ChartStudies;
  build(frame: ChartFrame): ChartDrawing;
}

/** A registered template with its params type erased behind `bind`. */
export interface ChartTemplate {
  readonly id: string;
  readonly kind: string;
  readonly summary: string;
  /** Validates request params (throws ChartParamsError naming every problem). */
  bind(params?: Record<string, unknown>): BoundChart;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const path = issue.path.map(String).join('.');
  return path === '' ? issue.message : `${path}: ${issue.message}`;
}

export function defineChartTemplate<P extends LayoutParams>(
  definition: ChartTemplateDefinition<P>,
): ChartTemplate {
  return {
    id: definition.id,
    kind: definition.kind,
    summary: definition.summary,
    bind(raw) {
      const parsed = definition.params.safeParse(raw ?? {});
      if (!parsed.success) {
        throw new ChartParamsError(definition.id, parsed.error.issues.map(describeIssue));
      }
      const params = parsed.data;
      return {
        chartTemplateId: definition.id,
        kind: definition.kind,
        size: {
          width: params.width ?? definition.defaultSize.width,
          height: params.height ?? definition.defaultSize.height,
        },
        bars: params.bars,
        studies: definition.studies?.(params) ?? { emaPeriods: [] },
        build: (frame) => definition.build(frame, params),
      };
    },
  };
}
