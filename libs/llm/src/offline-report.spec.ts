import { describe, expect, it } from 'vitest';
import { defaultReportSchema } from './default-registry';
import {
  analyseCandles,
  studiesOfManifest,
  type AnalysisCandle,
  type MarketAnalysis,
} from './offline-analysis';
import { buildOfflineReport, formatPrice } from './offline-report';
import { OutputSchemaValidatorCache } from './output-schema';
import { syntheticOhlcvExport } from './testing';

type Candle = AnalysisCandle & { complete?: boolean };

const validator = new OutputSchemaValidatorCache().get(defaultReportSchema().jsonSchema);

interface Report {
  summary: { markdown: string };
  details: {
    indicators: { name: string; value?: number; comment: string }[];
    risks: string[];
    trend: { rationale: string };
    outlook: { baseCase: string; bullCase: string; bearCase: string; invalidation: string };
  };
}

function report(analysis: MarketAnalysis, timeframe = '1w'): Report {
  const output = buildOfflineReport({
    symbol: 'ETH-USDT',
    timeframe,
    analysis,
    charts: [{ chartTemplateId: 'ctpl_default_v1', kind: 'candlestick' }],
    higherTimeframes: [],
  });
  expect(validator.validate(output).ok).toBe(true);
  return output as unknown as Report;
}

function candles(count: number, drift: number, timeframe: '1M' | '1w' = '1M'): Candle[] {
  return syntheticOhlcvExport({ count, drift, timeframe }).candles;
}

describe('the offline report cites the studies the chart draws', () => {
  it('a 40-month history: EMA(20) and the missing EMA(50), never EMA 9/21 (the old short-history swap)', () => {
    const out = report(analyseCandles(candles(40, 0.01)), '1M');
    expect(out.details.indicators.map((i) => i.name)).toEqual([
      'EMA(20)',
      'Bollinger(20,2)',
      'RSI(14)',
      'MACD(12,26,9)',
      'ATR(14)',
      'EMA(50)',
    ]);
    const missing = out.details.indicators.find((i) => i.name === 'EMA(50)');
    expect(missing).toEqual({
      name: 'EMA(50)',
      signal: 'neutral',
      comment: 'Not computed: EMA(50) needs 50 complete candles, 40 available.',
    });
    const text = JSON.stringify(out);
    expect(text).not.toMatch(/EMA\((9|21)\)/);
    expect(out.summary.markdown).toContain(
      'Not enough history: EMA(50) needs 50 complete candles, 40 available.',
    );
    expect(out.details.trend.rationale).toContain(
      'EMA(50) needs 50 complete candles, 40 available',
    );
  });

  it('a 9-bar history: only the change, and every drawn study named as missing', () => {
    const out = report(analyseCandles(candles(9, 0.01)), '1M');
    expect(out.details.indicators.map((i) => i.name)).toEqual([
      'Change over 9 candles',
      'EMA(20)',
      'EMA(50)',
      'Bollinger(20,2)',
      'RSI(14)',
      'MACD(12,26,9)',
    ]);
    expect(out.details.risks).toContain(
      'Only 9 complete candles: EMA(20), EMA(50), Bollinger(20,2), RSI(14), MACD(12,26,9) cannot be computed yet and levels are less reliable.',
    );
  });

  it('follows the charts of the manifest: EMA 9/21 and RSI(7) when that is what they draw', () => {
    const studies = studiesOfManifest({
      requested: [
        { chartTemplateId: 'ctpl_price_ema_v1', params: { emaPeriods: [9, 21] } },
        { chartTemplateId: 'ctpl_rsi_v1', params: { period: 7 } },
      ],
    });
    const out = report(analyseCandles(candles(80, 0.01), studies), '1M');
    expect(out.details.indicators.map((i) => i.name)).toEqual([
      'EMA(9)',
      'EMA(21)',
      'RSI(7)',
      'ATR(14)',
    ]);
    expect(out.details.trend.rationale).toMatch(/EMA\(9\) .* EMA\(21\)/);
  });
});

/** 60 weekly bars swinging 92..108 around 100, the last complete close back at the midline. */
function range(): Candle[] {
  return Array.from({ length: 60 }, (_, i) => {
    const close = 100 + 8 * Math.sin((i * Math.PI) / 6);
    const open = 100 + 8 * Math.sin(((i - 1) * Math.PI) / 6);
    return {
      openTime: new Date(Date.UTC(2025, 0, 6 + 7 * i)).toISOString(),
      open,
      high: Math.max(open, close) + 1,
      low: Math.min(open, close) - 1,
      close,
      volume: 1000,
    };
  });
}

function withForming(base: Candle[], high: number, low: number, close: number): Candle[] {
  const last = base[base.length - 1];
  if (last === undefined) throw new Error('no candles');
  const openTime = new Date(Date.parse(last.openTime) + 7 * 86_400_000).toISOString();
  return [...base, { openTime, open: last.close, high, low, close, volume: 10, complete: false }];
}

describe('the outlook and a forming candle already beyond a level it names', () => {
  // A range whose last complete week closes on a down-swing: a bearish weekly read, a resistance
  // (the invalidation level of a bearish outlook) above and a support below the close.
  const base = range();
  const a = analyseCandles(base);
  const outlookOf = (candles: Candle[]): Report['details']['outlook'] =>
    report(analyseCandles(candles)).details.outlook;
  const r1 = a.resistances[0];
  const s1 = a.supports[0];
  if (r1 === undefined || s1 === undefined) throw new Error('the range has no levels');
  const week = (candles: Candle[]): string =>
    candles[candles.length - 1]?.openTime.slice(0, 10) ?? '';

  it('starts from a bearish weekly outlook with levels on both sides', () => {
    expect(a.trend.direction).toBe('bearish');
    expect(r1.price).toBeGreaterThan(a.last.close);
    expect(s1.price).toBeLessThan(a.last.close);
  });

  it('says the forming week trades above the highest level it crossed and what confirms it', () => {
    const high = a.periodHigh.price + 3;
    const candles = withForming(base, high, a.last.close - 0.5, high - 1);
    const outlook = outlookOf(candles);
    expect(outlook.baseCase).toContain(
      `The forming week (opened ${week(candles)}) already trades above the period high at ${formatPrice(a.periodHigh.price)} (last ${formatPrice(high - 1)}, high ${formatPrice(high)}); confirmation needs a weekly close above it.`,
    );
    // A bearish outlook is invalidated by a weekly close above the nearest resistance.
    expect(outlook.invalidation).toBe(
      `A weekly close above ${formatPrice(r1.price)}. The forming week already trades above ${formatPrice(r1.price)}; its weekly close decides.`,
    );
    // The weekly analysis itself is unchanged: the forming bar confirms nothing.
    expect(analyseCandles(candles).resistances).toEqual(a.resistances);
  });

  it('says when the forming week only poked through and is back inside', () => {
    const close = a.last.close + 0.2;
    const outlook = outlookOf(withForming(base, r1.price + 0.5, a.last.close - 0.5, close));
    expect(outlook.baseCase).toContain(
      `already traded above the nearest resistance at ${formatPrice(r1.price)} (high ${formatPrice(r1.price + 0.5)}) but is back below it at ${formatPrice(close)}; only a weekly close above it would confirm the break.`,
    );
    expect(outlook.invalidation).toContain(
      `The forming week already traded above ${formatPrice(r1.price)}; its weekly close decides.`,
    );
  });

  it('names a break of the support the bearish case targets, without touching the invalidation', () => {
    const low = s1.price - 1;
    const outlook = outlookOf(withForming(base, a.last.close + 0.5, low, low + 0.3));
    // Here the nearest support is the low of the period: the level is called what it is.
    expect(s1.origin).toBe('period_low');
    expect(outlook.baseCase).toContain(
      `already trades below the period low at ${formatPrice(s1.price)} (last ${formatPrice(low + 0.3)}, low ${formatPrice(low)}); confirmation needs a weekly close below it.`,
    );
    expect(outlook.invalidation).toBe(`A weekly close above ${formatPrice(r1.price)}.`);
  });

  it('adds nothing while the forming week stays inside the named levels', () => {
    const outlook = outlookOf(
      withForming(base, a.last.close + 0.5, a.last.close - 0.5, a.last.close),
    );
    expect(outlook.baseCase).not.toContain('forming');
    expect(outlook.invalidation).not.toContain('forming');
  });
});
