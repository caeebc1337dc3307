import type { ResvgRenderOptions } from '@resvg/resvg-js';
import type { EChartsOption } from 'echarts';
import { CHART_FONT_FAMILY } from './chart-font';

/*
 * ECharts and resvg are loaded on the first rendering, not on import: processes that only read
 * what a template draws (the LLM worker's offline analyst, the CLI through @tda/llm) must not pay
 * ECharts' load time and memory at start-up. Same pattern as ccxt in libs/market-data.
 */
let echartsModule: Promise<typeof import('echarts')> | undefined;
let resvgModule: Promise<typeof import('@resvg/resvg-js')> | undefined;
const loadEcharts = (): Promise<typeof import('echarts')> => (echartsModule ??= import('echarts'));
const loadResvg = (): Promise<typeof import('@resvg/resvg-js')> =>
  (resvgModule ??= import('@resvg/resvg-js'));

export interface ChartSize {
  width: number;
  height: number;
}

/**
 * ECharts option -> SVG text, server side (no DOM, no canvas). Animation is forced off so the
 * first frame is the final one; the instance is always disposed (it holds the whole scene graph).
 */
export async function renderOptionToSvg(option: EChartsOption, size: ChartSize): Promise<string> {
  const echarts = await loadEcharts();
  const chart = echarts.init(null, null, {
    renderer: 'svg',
    ssr: true,
    width: size.width,
    height: size.height,
  });
  try {
    chart.setOption({ ...option, animation: false });
    return chart.renderToSVGString();
  } finally {
    chart.dispose();
  }
}

/**
 * SVG -> PNG with resvg on its worker thread pool (does not block the event loop; abortable).
 * Only the given font files are loaded: output depends on nothing installed on the host.
 */
export async function rasterizeSvg(
  svg: string,
  fontFiles: readonly string[],
  signal?: AbortSignal,
): Promise<Buffer> {
  const { renderAsync } = await loadResvg();
  const options: ResvgRenderOptions = {
    font: {
      fontFiles: [...fontFiles],
      loadSystemFonts: false,
      defaultFontFamily: CHART_FONT_FAMILY,
      sansSerifFamily: CHART_FONT_FAMILY,
    },
    background: '#ffffff',
    logLevel: 'off',
  };
  if (signal === undefined) return (await renderAsync(svg, options, null)).asPng();
  signal.throwIfAborted();
  // resvg-js (napi-rs) consumes the AbortSignal it is given: a second renderAsync with the same
  // signal fails with InvalidArg. A fresh controller per render, linked to the caller's signal.
  const local = new AbortController();
  const forward = (): void => local.abort(signal.reason);
  signal.addEventListener('abort', forward, { once: true });
  try {
    return (await renderAsync(svg, options, local.signal)).asPng();
  } finally {
    signal.removeEventListener('abort', forward);
  }
}
