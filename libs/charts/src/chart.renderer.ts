import { createHash } from 'node:crypto';
import { bundledFontFiles, checkFontFiles } from './chart-font';
import { createChartFrame, type ChartSeriesInput } from './chart-frame';
import {
  DEFAULT_MAX_BARS,
  MIN_CHART_HEIGHT,
  MIN_CHART_WIDTH,
  type BoundChart,
} from './chart-template';
import {
  createDefaultChartTemplateRegistry,
  type ChartTemplateRegistry,
} from './chart-template.registry';
import { ChartError, ChartRenderError, ChartTooLargeError } from './charts.errors';
import { readPngInfo } from './png-info';
import { rasterizeSvg, renderOptionToSvg, type ChartSize } from './svg-rasterizer';

/** seed 002 maxChartImageBytes: the LLM step rejects a bigger image, so we never produce one. */
export const DEFAULT_MAX_CHART_IMAGE_BYTES = 256 * 1024;
/** Shrinking never goes below this many bars (fewer would not show a trend). */
const MIN_FALLBACK_BARS = 20;

export interface ChartRendererOptions {
  templates?: ChartTemplateRegistry;
  /** Defaults to the bundled DejaVu Sans files. */
  fontFiles?: readonly string[];
  maxImageBytes?: number;
}

export interface ChartRequestLike {
  chartTemplateId: string;
  params?: Record<string, unknown> | undefined;
}

export interface RenderedChart {
  chartTemplateId: string;
  kind: string;
  png: Buffer;
  width: number;
  height: number;
  bytes: number;
  sha256: string;
  description: string;
  /** Bars actually drawn (fewer than requested when the size limit forced a fallback). */
  bars: number;
  /** 1 when the first rendering fit under the limit. */
  attempts: number;
}

interface Attempt {
  size: ChartSize;
  bars: number;
}

function scaled(size: ChartSize, factor: number): ChartSize {
  return {
    width: Math.max(MIN_CHART_WIDTH, Math.round(size.width * factor)),
    height: Math.max(MIN_CHART_HEIGHT, Math.round(size.height * factor)),
  };
}

/**
 * What to try when a PNG is over the limit, in order: as asked; half the bars (fewer edges
 * compress better); then 75% and 50% of the size. Deterministic, so a retry yields the same image.
 */
export function fallbackPlan(size: ChartSize, bars: number): Attempt[] {
  const fewer = Math.min(bars, Math.max(MIN_FALLBACK_BARS, Math.ceil(bars / 2)));
  const plan: Attempt[] = [
    { size, bars },
    { size, bars: fewer },
    { size: scaled(size, 0.75), bars: fewer },
    { size: scaled(size, 0.5), bars: fewer },
  ];
  const seen = new Set<string>();
  return plan.filter((a) => {
    const key = `${a.size.width}x${a.size.height}:${a.bars}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function reasonOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}

/**
 * Renders chart templates to PNG: ECharts (SSR, SVG) -> resvg with the bundled font. Same
 * candles and params -> byte-identical PNG and description.
 */
export class ChartRenderer {
  readonly templates: ChartTemplateRegistry;
  readonly maxImageBytes: number;
  private readonly fontFiles: string[];

  constructor(options: ChartRendererOptions = {}) {
    this.templates = options.templates ?? createDefaultChartTemplateRegistry();
    this.maxImageBytes = options.maxImageBytes ?? DEFAULT_MAX_CHART_IMAGE_BYTES;
    if (!Number.isInteger(this.maxImageBytes) || this.maxImageBytes < 1) {
      throw new RangeError(`maxImageBytes must be a positive integer, got ${this.maxImageBytes}`);
    }
    this.fontFiles = checkFontFiles(options.fontFiles ?? bundledFontFiles());
  }

  /**
   * Resolves and validates a request: UnknownChartTemplateError / ChartParamsError
   * (INVALID_STEP_INPUTS) before any work is done.
   */
  bind(request: ChartRequestLike): BoundChart {
    return this.templates.get(request.chartTemplateId).bind(request.params);
  }

  /**
   * Draws one chart. Over the size limit it falls back to fewer bars / smaller sizes and throws
   * ChartTooLargeError when even the smallest is too big; other failures are ChartRenderError. An
   * aborted signal rejects with the signal's reason, not with a chart error.
   */
  async render(
    chart: BoundChart,
    input: ChartSeriesInput,
    options: { signal?: AbortSignal } = {},
  ): Promise<RenderedChart> {
    const { signal } = options;
    if (input.candles.length === 0) {
      throw new ChartRenderError(chart.chartTemplateId, 'no candles to draw');
    }
    const bars = Math.min(chart.bars ?? DEFAULT_MAX_BARS, input.candles.length);
    const plan = fallbackPlan(chart.size, bars);
    let smallest = Number.POSITIVE_INFINITY;
    for (const [index, attempt] of plan.entries()) {
      signal?.throwIfAborted();
      const frame = createChartFrame(input, attempt.size, attempt.bars);
      let png: Buffer;
      let description: string;
      try {
        const drawing = chart.build(frame);
        description = drawing.description;
        const svg = await renderOptionToSvg(drawing.option, attempt.size);
        png = await rasterizeSvg(svg, this.fontFiles, signal);
      } catch (error) {
        signal?.throwIfAborted();
        if (error instanceof ChartError) throw error;
        throw new ChartRenderError(chart.chartTemplateId, reasonOf(error), error);
      }
      smallest = Math.min(smallest, png.length);
      if (png.length > this.maxImageBytes) continue;
      const info = readPngInfo(png);
      return {
        chartTemplateId: chart.chartTemplateId,
        kind: chart.kind,
        png,
        width: info.width,
        height: info.height,
        bytes: png.length,
        sha256: createHash('sha256').update(png).digest('hex'),
        description,
        bars: frame.shown.length,
        attempts: index + 1,
      };
    }
    throw new ChartTooLargeError(chart.chartTemplateId, smallest, this.maxImageBytes);
  }
}
