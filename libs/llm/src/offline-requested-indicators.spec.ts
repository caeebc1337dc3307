import { describe, expect, it } from 'vitest';
import {
  offlineIndicatorRequest,
  requestedIndicatorReadings,
  withRequestedIndicators,
} from './offline-requested-indicators';

const point = (values: Record<string, number>) => ({ openTime: '2026-09-19T00:00:00Z', values });
const result = (name: string, label: string, values: Record<string, number>, first = values) => ({
  name,
  label,
  status: 'ok',
  latest: point(values),
  tail: [point(first), point(values)],
});

/** An indicator_values artifact as the INDICATORS_ON_DEMAND worker writes it (the parts read). */
const ARTIFACT = {
  indicators: [
    result('ATR', 'ATR(14)', { value: 1500 }),
    result('ADX', 'ADX(14)', { adx: 31.24, plusDI: 28, minusDI: 12 }),
    result('STOCHASTIC', 'STOCHASTIC(14,3)', { k: 86.1, d: 80.2 }),
    result('OBV', 'OBV', { value: 900 }, { value: 1000 }),
    { name: 'RSI', label: 'RSI(100)', status: 'insufficient_data', latest: null, tail: [] },
  ],
};

describe('offline analyst, flow 5', () => {
  it('asks for volatility, trend strength, momentum and volume on its own timeframe', () => {
    expect(offlineIndicatorRequest('4h')).toEqual([
      {
        timeframe: '4h',
        indicators: [
          { name: 'ATR', params: { period: 14 } },
          { name: 'ADX', params: { period: 14 } },
          { name: 'STOCHASTIC', params: { k: 14, d: 3 } },
          { name: 'OBV' },
        ],
      },
    ]);
  });

  it('reads the computed values with textbook thresholds and skips what could not be computed', () => {
    const readings = requestedIndicatorReadings([ARTIFACT, 'garbage'], 60_000);
    expect(readings.map((r) => [r.name, r.value, r.signal])).toEqual([
      ['ATR(14)', 1500, 'neutral'],
      ['ADX(14)', 31.2, 'bullish'],
      ['STOCHASTIC(14,3)', 86.1, 'bearish'],
      ['OBV', 900, 'bearish'],
    ]);
    expect(readings[0]?.comment).toContain('2.5% of the close');
    expect(readings[1]?.comment).toContain('a trending market, +DI leads');
  });

  it('puts the readings first in details.indicators and adds a paragraph quoting them', () => {
    const report = {
      summary: { markdown: '## Report' },
      details: { indicators: [{ name: 'RSI(14)', signal: 'neutral', comment: 'x' }] },
    };
    const readings = requestedIndicatorReadings([ARTIFACT], 60_000);
    const next = withRequestedIndicators(report, readings);
    expect(next.summary.markdown).toMatch(/^## Report\n\n\*\*Requested indicators\.\*\* ATR\(14\)/);
    expect((next.details['indicators'] as { name: string }[]).map((i) => i.name)).toEqual([
      'ATR(14)',
      'ADX(14)',
      'STOCHASTIC(14,3)',
      'OBV',
      'RSI(14)',
    ]);
    expect(withRequestedIndicators(report, [])).toBe(report);
  });
});
