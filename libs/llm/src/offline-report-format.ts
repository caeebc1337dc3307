import type { PriceLevel, TrendDirection } from './offline-analysis';

/**
 * The wording every section of the offline analyst's report shares: timeframe words, numbers and
 * times, level phrases. Every number is formatted by code here (no locale APIs), so the text is
 * byte-identical on every machine.
 */

export const TIMEFRAME_NAMES: Readonly<Record<string, string>> = {
  '1M': 'monthly',
  '1w': 'weekly',
  '1d': 'daily',
  '4h': '4-hour',
  '1h': 'hourly',
};

/** What one candle of the timeframe is called: "the forming week". */
export const TIMEFRAME_UNITS: Readonly<Record<string, string>> = {
  '1M': 'month',
  '1w': 'week',
  '1d': 'day',
  '4h': '4-hour candle',
  '1h': 'hourly candle',
};

export const HORIZONS: Readonly<Record<string, string>> = {
  '1M': 'next 1-3 months',
  '1w': 'next 2-6 weeks',
  '1d': 'next 1-2 weeks',
  '4h': 'next 2-5 days',
  '1h': 'next 12-48 hours',
};

function withThousands(integerDigits: string): string {
  return integerDigits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** Prices for text: 43,193 / 187.35 / 0.06421. */
export function formatPrice(value: number): string {
  const abs = Math.abs(value);
  const sign = value < 0 ? '-' : '';
  if (abs >= 1000) return `${sign}${withThousands(Math.round(abs).toString())}`;
  if (abs >= 1) {
    const [int = '0', frac = '00'] = abs.toFixed(2).split('.');
    return `${sign}${withThousands(int)}.${frac}`;
  }
  return `${sign}${Number(abs.toPrecision(4)).toString()}`;
}

/** Prices for JSON: 2 decimals from 1 up, 4 significant digits below. */
export function roundPrice(value: number): number {
  if (Math.abs(value) >= 1) return Math.round(value * 100) / 100;
  return Number(value.toPrecision(4));
}

export function pct(value: number, digits = 1): string {
  const fixed = value.toFixed(digits);
  return value > 0 ? `+${fixed}%` : `${fixed}%`;
}

export function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** openTime at the timeframe's resolution: 2022-02 for months, 2022-02-21 for days/weeks. */
export function formatOpenTime(openTime: string, timeframe: string): string {
  if (timeframe === '1M') return openTime.slice(0, 7);
  if (timeframe === '4h' || timeframe === '1h')
    return `${openTime.slice(0, 10)} ${openTime.slice(11, 16)} UTC`;
  return openTime.slice(0, 10);
}

/** What a level is, as a phrase: "swing low of 2022-01-24" / "EMA(50) as a dynamic level". */
function levelOrigin(level: PriceLevel, timeframe: string): string {
  const when = formatOpenTime(level.label, timeframe);
  switch (level.origin) {
    case 'period_high':
      return `highest high of the period, ${when}`;
    case 'period_low':
      return `lowest low of the period, ${when}`;
    case 'swing_high':
      return `swing high of ${when}`;
    case 'swing_low':
      return `swing low of ${when}`;
    case 'ema':
      return `${level.label} as a dynamic level`;
  }
}

function touchesNote(level: PriceLevel): string | undefined {
  return level.touches >= 2 ? `${level.touches} swings in this zone` : undefined;
}

/** details.keyLevels[].rationale: "Swing low of 2021-07-19; 3 swings in this zone." */
export function levelRationale(level: PriceLevel, timeframe: string): string {
  const origin = levelOrigin(level, timeframe);
  const note = touchesNote(level);
  const sentence = `${origin.charAt(0).toUpperCase()}${origin.slice(1)}`;
  return note === undefined ? `${sentence}.` : `${sentence}; ${note}.`;
}

/** Markdown: "29,361 (swing low of 2021-07-19, 3 swings in this zone, major)". */
export function levelText(level: PriceLevel, timeframe: string): string {
  const parts = [levelOrigin(level, timeframe), touchesNote(level), level.strength].filter(
    (part): part is string => part !== undefined,
  );
  return `${formatPrice(level.price)} (${parts.join(', ')})`;
}

export type Signal = 'bullish' | 'bearish' | 'neutral';

export function biasOf(direction: TrendDirection): Signal {
  return direction === 'sideways' ? 'neutral' : direction;
}
