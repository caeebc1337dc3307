import { formatPrice, round, type Signal } from './offline-report-format';

/**
 * Flow 5 for the offline analyst: what it asks for when it may (the indicators its charts do not
 * show), and how a follow-up report reads the values it gets, with fixed textbook thresholds.
 */

/** The request of a first report on `timeframe`: volatility, trend strength, momentum, volume. */
export function offlineIndicatorRequest(timeframe: string): unknown[] {
  return [
    {
      timeframe,
      indicators: [
        { name: 'ATR', params: { period: 14 } },
        { name: 'ADX', params: { period: 14 } },
        { name: 'STOCHASTIC', params: { k: 14, d: 3 } },
        { name: 'OBV' },
      ],
    },
  ];
}

interface Reading {
  name: string;
  value?: number;
  signal: Signal;
  comment: string;
}

type Values = Record<string, number>;

function asObject(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function numbers(value: unknown): Values {
  const out: Values = {};
  for (const [key, v] of Object.entries(asObject(value) ?? {})) {
    if (typeof v === 'number' && Number.isFinite(v)) out[key] = v;
  }
  return out;
}

function side(close: number, level: number, label: string): Reading {
  const above = close >= level;
  return {
    name: label,
    value: round(level, 2),
    signal: above ? 'bullish' : 'bearish',
    comment: `${label} ${formatPrice(level)}: the close ${formatPrice(close)} is ${above ? 'above' : 'below'} it.`,
  };
}

/** One reading per indicator name; first field of a point is `value` unless the name says. */
function interpret(name: string, label: string, v: Values, first: Values, close: number): Reading {
  const value = v['value'] ?? 0;
  switch (name) {
    case 'ADX': {
      const adx = v['adx'] ?? 0;
      const lead = (v['plusDI'] ?? 0) >= (v['minusDI'] ?? 0) ? 'bullish' : 'bearish';
      const trending = adx >= 25;
      return {
        name: label,
        value: round(adx, 1),
        signal: trending ? lead : 'neutral',
        comment: `${label} ${round(adx, 1)}: ${trending ? `a trending market, ${lead === 'bullish' ? '+DI' : '-DI'} leads` : 'no established trend (below 25)'}.`,
      };
    }
    case 'ATR':
      return {
        name: label,
        value: round(value, 2),
        signal: 'neutral',
        comment: `${label} ${formatPrice(value)}, ${round((value / close) * 100, 2)}% of the close: the typical range of one candle, a floor for stop distances.`,
      };
    case 'STOCHASTIC': {
      const k = v['k'] ?? 50;
      const zone = k >= 80 ? 'overbought' : k <= 20 ? 'oversold' : 'mid-range';
      return {
        name: label,
        value: round(k, 1),
        signal: k >= 80 ? 'bearish' : k <= 20 ? 'bullish' : 'neutral',
        comment: `${label} %K ${round(k, 1)} / %D ${round(v['d'] ?? k, 1)}: ${zone}.`,
      };
    }
    case 'RSI':
      return {
        name: label,
        value: round(value, 1),
        signal: value >= 70 ? 'bearish' : value <= 30 ? 'bullish' : 'neutral',
        comment: `${label} ${round(value, 1)}.`,
      };
    case 'MACD': {
      const histogram = v['histogram'] ?? 0;
      return {
        name: label,
        value: round(v['macd'] ?? 0, 2),
        signal: histogram >= 0 ? 'bullish' : 'bearish',
        comment: `${label} histogram ${round(histogram, 2)}: momentum ${histogram >= 0 ? 'above' : 'below'} its signal line.`,
      };
    }
    case 'BOLLINGER':
      return side(close, v['middle'] ?? close, label);
    case 'OBV': {
      const change = value - (first['value'] ?? value);
      return {
        name: label,
        value: round(value, 0),
        signal: change > 0 ? 'bullish' : change < 0 ? 'bearish' : 'neutral',
        comment: `${label} ${change >= 0 ? 'rose' : 'fell'} by ${round(Math.abs(change), 0)} over the recent candles: volume ${change >= 0 ? 'confirms buying' : 'leans to selling'}.`,
      };
    }
    default:
      return side(close, value, label);
  }
}

/** The readings of indicator_values artifacts (computed ones only), in artifact order. */
export function requestedIndicatorReadings(
  artifacts: readonly unknown[],
  close: number,
): Reading[] {
  const readings: Reading[] = [];
  for (const artifact of artifacts) {
    const list = asObject(artifact)?.['indicators'];
    for (const item of Array.isArray(list) ? list : []) {
      const result = asObject(item);
      const latest = asObject(result?.['latest']);
      const name = result?.['name'];
      const label = result?.['label'];
      if (typeof name !== 'string' || typeof label !== 'string' || latest === undefined) continue;
      const tail = result?.['tail'];
      const first = numbers(asObject(Array.isArray(tail) ? tail[0] : undefined)?.['values']);
      readings.push(interpret(name, label, numbers(latest['values']), first, close));
    }
  }
  return readings;
}

/** The report with the requested readings in details.indicators and a paragraph of their own. */
export function withRequestedIndicators(
  report: { summary: { markdown: string }; details: Record<string, unknown> },
  readings: readonly Reading[],
): { summary: { markdown: string }; details: Record<string, unknown> } {
  if (readings.length === 0) return report;
  const listed = report.details['indicators'];
  const paragraph = `**Requested indicators.** ${readings.map((r) => r.comment).join(' ')}`;
  return {
    summary: { markdown: `${report.summary.markdown}\n\n${paragraph}` },
    details: {
      ...report.details,
      indicators: [...readings, ...(Array.isArray(listed) ? listed : [])],
    },
  };
}
