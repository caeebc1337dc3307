import { describe, expect, it } from 'vitest';
import { createChartFrame } from '../chart-frame';
import { defaultChartTemplate } from '../templates/default.template';
import { bollingerSeries } from '../indicators';
import { parabolicCloses, syntheticSeries } from '../testing';

interface SeriesLike {
  name?: string;
  type?: string;
  data?: unknown[];
  yAxisIndex?: number;
}

function build(closes: readonly number[], params: Record<string, unknown> = {}) {
  const chart = defaultChartTemplate.bind(params);
  const input = syntheticSeries(closes, '1w');
  const frame = createChartFrame(input, chart.size, closes.length);
  const drawing = chart.build(frame);
  const option = drawing.option as {
    series: SeriesLike[];
    yAxis: { type?: string; min?: number; max?: number }[];
  };
  const bands = option.series.filter((s) => s.name === 'BB 20,2');
  return { drawing, option, bands, input };
}

describe('price pane on a log axis: a lower Bollinger band below zero or below the candles', () => {
  const closes = parabolicCloses();
  const { drawing, option, bands, input } = build(closes, { priceScale: 'log' });
  const truth = bollingerSeries(closes, 20, 2);
  const lower = bands[2]?.data ?? [];

  it('keeps the axis fitted to the candles, not to the bands', () => {
    const lows = input.candles.map((c) => c.low);
    const highs = input.candles.map((c) => c.high);
    expect(option.yAxis[0]).toMatchObject({
      type: 'log',
      min: Number((Math.min(...lows) * 0.9).toPrecision(3)),
      max: Number((Math.max(...highs) * 1.1).toPrecision(3)),
    });
    expect(truth.some((b) => b !== null && b.lower <= 0)).toBe(true);
  });

  it('draws the band through the bottom edge (clipped) instead of stopping in mid-air', () => {
    const floor = option.yAxis[0]?.min ?? Number.NaN;
    expect(bands).toHaveLength(3);
    truth.forEach((band, i) => {
      const drawn = lower[i];
      if (band === null) {
        expect(drawn).toBe('-');
        return;
      }
      // Every bar with a band has a drawable (positive) point: no gap where it goes <= 0.
      expect(typeof drawn).toBe('number');
      expect(drawn as number).toBeGreaterThan(0);
      if (band.lower < floor) expect(drawn as number).toBeLessThan(floor);
      else expect(drawn).toBe(band.lower);
    });
    for (const s of option.series.filter((x) => x.type === 'line' && x.yAxisIndex === 0)) {
      expect(s).toMatchObject({ clip: true });
    }
  });

  it('says the lower band is below zero without a "-" that reads as a range', () => {
    expect(drawing.description).toMatch(
      /Bollinger\(20,2\) lower -[\d,]+ \(below zero\), upper [\d,]+, /,
    );
  });

  it('leaves a linear axis alone: values below its floor are clipped by the grid as they are', () => {
    const linear = build(closes, { priceScale: 'linear' });
    const raw = linear.bands[2]?.data ?? [];
    truth.forEach((band, i) => expect(raw[i]).toBe(band === null ? '-' : band.lower));
  });
});
