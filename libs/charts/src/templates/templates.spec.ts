import { describe, expect, it } from 'vitest';
import { createChartFrame } from '../chart-frame';
import { createDefaultChartTemplateRegistry } from '../chart-template.registry';
import type { ChartTemplate } from '../chart-template';
import { renderOptionToSvg } from '../svg-rasterizer';
import { syntheticSeries } from '../testing';
import type { Timeframe } from '@tda/contracts';

const registry = createDefaultChartTemplateRegistry();

async function draw(
  template: ChartTemplate | string,
  closes: readonly number[],
  timeframe: Timeframe,
  params: Record<string, unknown> = {},
) {
  const chart = (typeof template === 'string' ? registry.get(template) : template).bind(params);
  const frame = createChartFrame(syntheticSeries(closes, timeframe), chart.size, closes.length);
  const drawing = chart.build(frame);
  return { drawing, svg: await renderOptionToSvg(drawing.option, chart.size) };
}

const rising = (n: number): number[] => Array.from({ length: n }, (_, i) => 100 + 2 * i);

interface TitleLike {
  text?: string;
}

function titles(option: unknown): string[] {
  const title = (option as { title?: TitleLike[] }).title ?? [];
  return title.map((t) => t.text ?? '');
}

describe('panes of studies the history is too short for', () => {
  it('the default chart says in each pane what is missing (9 monthly bars)', async () => {
    const { drawing, svg } = await draw('ctpl_default_v1', rising(9), '1M');
    const notes = [
      'EMA(20) needs 20 bars, 9 available',
      'EMA(50) needs 50 bars, 9 available',
      'Bollinger(20,2) needs 20 bars, 9 available',
      'RSI(14) needs 15 bars, 9 available',
      'MACD(12,26,9) needs 34 bars, 9 available',
    ];
    // In the image (ECharts writes the text into the SVG that resvg rasterizes)...
    for (const note of notes) expect(svg).toContain(note);
    // ...and in the description the manifest carries.
    for (const note of notes) expect(drawing.description).toContain(note);
  });

  it('names only the studies that are missing (30 bars: EMA 50 and the MACD signal)', async () => {
    const { drawing } = await draw('ctpl_default_v1', rising(30), '1M');
    const text = titles(drawing.option).join('\n');
    expect(text).toContain('EMA(50) needs 50 bars, 30 available');
    expect(text).toContain('MACD(12,26,9) needs 34 bars, 30 available');
    expect(text).not.toContain('EMA(20) needs');
    expect(text).not.toContain('RSI(14) needs');
    expect(drawing.description).toContain('close above EMA20 (');
  });

  it('draws no note when every study has its bars', async () => {
    const { drawing } = await draw('ctpl_default_v1', rising(60), '1M');
    expect(titles(drawing.option).join('\n')).not.toContain('needs');
    expect(drawing.description).not.toContain('needs');
  });

  it.each([
    ['ctpl_rsi_v1', {}, 'RSI(14) needs 15 bars, 12 available'],
    ['ctpl_rsi_v1', { period: 21 }, 'RSI(21) needs 22 bars, 12 available'],
    ['ctpl_macd_v1', { fast: 5, slow: 10, signal: 5 }, 'MACD(5,10,5) needs 14 bars, 12 available'],
    ['ctpl_price_ema_v1', { emaPeriods: [9, 21] }, 'EMA(21) needs 21 bars, 12 available'],
  ])('%s %j says "%s" in the image and the description', async (id, params, note) => {
    const { drawing, svg } = await draw(id, rising(12), '1d', params);
    expect(svg).toContain(note);
    expect(drawing.description).toContain(note);
  });
});

describe('time axis', () => {
  function bottomAxis(option: unknown): { name?: string; data?: string[] } {
    const axes = (
      option as { xAxis: { name?: string; data?: string[]; axisLabel?: { show?: boolean } }[] }
    ).xAxis;
    return axes.find((a) => a.axisLabel?.show === true) ?? {};
  }

  it.each(['1h', '4h'] as const)('%s charts label their bars in UTC', async (timeframe) => {
    for (const id of registry.ids()) {
      const { drawing, svg } = await draw(id, rising(60), timeframe);
      const axis = bottomAxis(drawing.option);
      expect(axis.name, id).toBe('Bar open time (UTC)');
      expect(svg, id).toContain('Bar open time (UTC)');
      // Full date and time: '2020-01-03 12:00', not '01-03 12:00'.
      expect(axis.data?.[0], id).toBe('2020-01-01 00:00');
      expect(titles(drawing.option)[0], id).toMatch(/ UTC$/);
      expect(drawing.description, id).toMatch(
        /^ETH-USDT \d+h candles 2020-01-01 00:00\.\.\S+ \S+ UTC \(/,
      );
    }
  });

  it.each([
    ['1d', 'Day (UTC)', '2020-01-01'],
    ['1w', 'Week starting (UTC)', '2020-01-01'],
    ['1M', 'Month (UTC)', '2020-01'],
  ] as const)('%s charts say what a date label is: %s', async (timeframe, name, first) => {
    const { drawing, svg } = await draw('ctpl_default_v1', rising(60), timeframe);
    expect(bottomAxis(drawing.option)).toMatchObject({ name });
    expect(bottomAxis(drawing.option).data?.[0]).toBe(first);
    expect(svg).toContain(name);
  });
});

describe('template studies (what a report on the chart may quote)', () => {
  it('are the settings each template draws, defaults included', () => {
    expect(registry.get('ctpl_default_v1').bind().studies).toEqual({
      emaPeriods: [20, 50],
      bollinger: { period: 20, multiplier: 2 },
      rsi: { period: 14, overbought: 70, oversold: 30 },
      macd: { fast: 12, slow: 26, signal: 9 },
    });
    expect(registry.get('ctpl_price_ema_v1').bind({ emaPeriods: [9, 21] }).studies).toEqual({
      emaPeriods: [9, 21],
      bollinger: undefined,
    });
    expect(registry.get('ctpl_rsi_v1').bind({ period: 21 }).studies).toEqual({
      emaPeriods: [],
      rsi: { period: 21, overbought: 70, oversold: 30 },
    });
    expect(registry.get('ctpl_macd_v1').bind().studies).toEqual({
      emaPeriods: [],
      macd: { fast: 12, slow: 26, signal: 9 },
    });
  });

  it("merge over a manifest's requests; unknown templates and refused params count for nothing", () => {
    expect(
      registry.studiesOf([
        { chartTemplateId: 'ctpl_price_ema_v1', params: { emaPeriods: [50, 9] } },
        { chartTemplateId: 'ctpl_rsi_v1' },
        { chartTemplateId: 'ctpl_future_v9' },
        { chartTemplateId: 'ctpl_macd_v1', params: { fast: 30, slow: 26 } },
      ]),
    ).toEqual({
      emaPeriods: [9, 50],
      rsi: { period: 14, overbought: 70, oversold: 30 },
    });
    expect(registry.studiesOf([{ chartTemplateId: 'ctpl_future_v9' }])).toBeNull();
  });
});
