import { describe, expect, it } from 'vitest';
import {
  type AnalysisCandle,
  analyseCandles,
  DEFAULT_REPORT_STUDIES,
  studiesOfManifest,
} from './offline-analysis';
import { formatOpenTime, formatPrice, roundPrice } from './offline-report';
import { syntheticOhlcvExport } from './testing';

function candles(drift: number, count = 120): AnalysisCandle[] {
  return syntheticOhlcvExport({ count, drift }).candles;
}

describe('analyseCandles', () => {
  it('reads a rising series as bullish and a falling one as bearish', () => {
    expect(analyseCandles(candles(0.01)).trend.direction).toBe('bullish');
    expect(analyseCandles(candles(-0.01)).trend.direction).toBe('bearish');
  });

  it('reads a range (flat, intertwined EMAs) as sideways, wherever the last close sits', () => {
    const flat: AnalysisCandle[] = Array.from({ length: 120 }, (_, i) => {
      const close = 100 + 5 * Math.sin(i * 1.1);
      return {
        openTime: new Date(Date.UTC(2025, 0, 1 + i)).toISOString(),
        open: 100,
        high: Math.max(100, close) + 1,
        low: Math.min(100, close) - 1,
        close,
        volume: 1,
      };
    });
    for (let end = 100; end <= 120; end += 1) {
      expect(analyseCandles(flat.slice(0, end)).trend).toMatchObject({
        direction: 'sideways',
        strength: 'weak',
      });
    }
  });

  it('puts supports below and resistances above the last close, nearest first, at most 3 each', () => {
    const analysis = analyseCandles(candles(0.002, 200));
    const close = analysis.last.close;
    expect(analysis.supports.length).toBeGreaterThan(0);
    expect(analysis.supports.length).toBeLessThanOrEqual(3);
    expect(analysis.resistances.length).toBeLessThanOrEqual(3);
    for (const s of analysis.supports) expect(s.price).toBeLessThan(close);
    for (const r of analysis.resistances) expect(r.price).toBeGreaterThan(close);
    const s = analysis.supports.map((l) => l.price);
    const r = analysis.resistances.map((l) => l.price);
    expect(s).toEqual([...s].sort((a, b) => b - a));
    expect(r).toEqual([...r].sort((a, b) => a - b));
  });

  it('finds the swing low the price bounced from', () => {
    // down to 50 at index 30, back up to 80: the swing low at 50 is the major support
    const series: AnalysisCandle[] = Array.from({ length: 60 }, (_, i) => {
      const close = i <= 30 ? 100 - (50 * i) / 30 : 50 + i - 30;
      return {
        openTime: new Date(Date.UTC(2025, 0, 1 + i)).toISOString(),
        open: close,
        high: close + 0.5,
        low: close - 0.5,
        close,
        volume: 1,
      };
    });
    const analysis = analyseCandles(series);
    expect(analysis.periodLow.price).toBe(49.5);
    expect(analysis.supports.some((l) => l.price === 49.5 && l.strength === 'major')).toBe(true);
  });

  it('leaves a still-forming last candle out of the indicators', () => {
    const base = candles(0.01, 80);
    const withForming = [
      ...base,
      {
        openTime: '2030-01-01T00:00:00Z',
        open: 1,
        high: 1,
        low: 0.5,
        close: 0.6,
        volume: 1,
        complete: false,
      },
    ];
    const a = analyseCandles(base);
    const b = analyseCandles(withForming);
    expect(b.forming?.close).toBe(0.6);
    expect(b.last).toEqual(a.last);
    expect(b.rsi).toBe(a.rsi);
    expect(b.emaFast).toEqual(a.emaFast);
  });

  it('computes RSI, MACD and ATR only with enough history', () => {
    const long = analyseCandles(candles(0.005, 80));
    expect(long.rsi).not.toBeNull();
    expect(long.macd).not.toBeNull();
    expect(long.atr?.pct).toBeGreaterThan(0);
    const short = analyseCandles(candles(0.005, 10));
    expect([short.rsi, short.macd, short.atr, short.emaFast, short.emaSlow]).toEqual([
      null,
      null,
      null,
      null,
      null,
    ]);
    expect(short.trend.strength).toBe('weak');
    expect(() => analyseCandles([])).toThrow(RangeError);
  });

  it('is deterministic', () => {
    expect(analyseCandles(candles(0.003))).toEqual(analyseCandles(candles(0.003)));
  });
});

describe("the studies the analysis computes: the charts' (one source of truth)", () => {
  it('defaults to the report chart (ctpl_default_v1): EMA 20/50, Bollinger(20,2), RSI(14), MACD(12,26,9)', () => {
    expect(DEFAULT_REPORT_STUDIES).toEqual({
      emaPeriods: [20, 50],
      bollinger: { period: 20, multiplier: 2 },
      rsi: { period: 14, overbought: 70, oversold: 30 },
      macd: { fast: 12, slow: 26, signal: 9 },
    });
  });

  it("keeps the chart's EMAs on a short history (40 bars: EMA 20, no EMA 50; never 9/21)", () => {
    const analysis = analyseCandles(candles(0.01, 40));
    expect(analysis.emas.map((e) => e.period)).toEqual([20]);
    expect(analysis.emaFast?.period).toBe(20);
    expect(analysis.emaSlow).toBeNull();
    expect(analysis.shortfalls).toEqual([{ study: 'EMA(50)', needed: 50, available: 40 }]);
    expect(analysis.bollinger).not.toBeNull();
  });

  it("reads the studies of a manifest's requests, with their params", () => {
    const manifest = {
      requested: [
        {
          chartTemplateId: 'ctpl_price_ema_v1',
          kind: 'candlestick',
          params: { emaPeriods: [9, 21] },
        },
        { chartTemplateId: 'ctpl_rsi_v1', kind: 'rsi', params: { period: 7 } },
      ],
    };
    const studies = studiesOfManifest(manifest);
    expect(studies).toEqual({
      emaPeriods: [9, 21],
      rsi: { period: 7, overbought: 70, oversold: 30 },
    });
    const analysis = analyseCandles(candles(0.01, 80), studies);
    expect(analysis.emas.map((e) => e.period)).toEqual([9, 21]);
    expect([analysis.macd, analysis.bollinger]).toEqual([null, null]);
    expect(analysis.rsi).not.toBeNull();
    // Nothing this version knows (or no manifest): the report chart's studies.
    expect(studiesOfManifest({ requested: [{ chartTemplateId: 'ctpl_next_v7' }] })).toEqual(
      DEFAULT_REPORT_STUDIES,
    );
    expect(studiesOfManifest(undefined)).toEqual(DEFAULT_REPORT_STUDIES);
  });

  it('measures an EMA slope over the bars it has right after its warm-up', () => {
    const analysis = analyseCandles(candles(0.01, 22));
    expect(analysis.emaFast).toMatchObject({ period: 20, slopeBars: 2 });
    expect(analyseCandles(candles(0.01, 20)).emaFast).toMatchObject({ slopeBars: 0, change: 0 });
  });
});

describe('number and date formatting (locale-independent)', () => {
  it.each([
    [68789.63, '68,790'],
    [1234567.4, '1,234,567'],
    [187.346, '187.35'],
    [1, '1.00'],
    [0.064213, '0.06421'],
    [-2598.2, '-2,598'],
  ])('formatPrice(%s) = %s', (value, text) => {
    expect(formatPrice(value)).toBe(text);
  });

  it('rounds JSON prices to 2 decimals (4 significant digits below 1)', () => {
    expect(roundPrice(43193.233)).toBe(43193.23);
    expect(roundPrice(0.0642139)).toBe(0.06421);
  });

  it('formats open times at the timeframe resolution', () => {
    expect(formatOpenTime('2022-02-01T00:00:00Z', '1M')).toBe('2022-02');
    expect(formatOpenTime('2022-02-21T00:00:00Z', '1w')).toBe('2022-02-21');
    expect(formatOpenTime('2026-09-19T04:00:00Z', '4h')).toBe('2026-09-19 04:00 UTC');
  });
});
