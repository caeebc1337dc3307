import type { Timeframe } from '@tda/contracts';

/*
 * Locale-free number and date formatting. Chart labels and descriptions end up in deterministic
 * artifacts (PNG bytes, manifest JSON), so nothing here may depend on the host locale or time zone
 * (Intl / toLocaleString would: a slim container and a laptop format 43193 differently).
 */

/** Groups the integer part with ',' (43193.5 -> '43,193.5'). */
function groupThousands(fixed: string): string {
  const negative = fixed.startsWith('-');
  const unsigned = negative ? fixed.slice(1) : fixed;
  const [integer = '', fraction] = unsigned.split('.');
  const grouped = integer.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${negative ? '-' : ''}${grouped}${fraction === undefined ? '' : `.${fraction}`}`;
}

/** '-0' and '-0.00' read as noise in a description; a value that rounds to zero is zero. */
function dropNegativeZero(text: string): string {
  return /^-[0.,]+$/.test(text) ? text.slice(1) : text;
}

/**
 * A price as a trader reads it: no decimals from 1,000 up, 2 decimals from 1, else 4 significant
 * digits (small-cap coins), scientific only below 0.0001.
 */
export function formatPrice(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  const abs = Math.abs(value);
  if (abs >= 1000) return dropNegativeZero(groupThousands(value.toFixed(0)));
  if (abs >= 1) return dropNegativeZero(groupThousands(value.toFixed(2)));
  if (abs === 0) return '0';
  if (abs >= 0.0001) return dropNegativeZero(Number(value.toPrecision(4)).toString());
  return value.toExponential(3);
}

/** Fixed decimals with thousands separators (indicator readings: RSI 57.3, MACD -1,234.5). */
export function formatFixed(value: number, decimals: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  return dropNegativeZero(groupThousands(value.toFixed(decimals)));
}

/** Signed percent with one decimal: +12.3%, -4.0%. */
export function formatPercent(ratio: number): string {
  if (!Number.isFinite(ratio)) return 'n/a';
  const text = dropNegativeZero((ratio * 100).toFixed(1));
  return `${text.startsWith('-') || text === '0.0' ? '' : '+'}${text}%`;
}

const COMPACT_UNITS: readonly [number, string][] = [
  [1e12, 'T'],
  [1e9, 'B'],
  [1e6, 'M'],
  [1e3, 'K'],
];

/** Volumes and axis ticks of large numbers: 1.29T, 35.7B, 950. */
export function formatCompact(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  const abs = Math.abs(value);
  for (const [unit, suffix] of COMPACT_UNITS) {
    if (abs >= unit) {
      const scaled = value / unit;
      const decimals = Math.abs(scaled) >= 100 ? 0 : Math.abs(scaled) >= 10 ? 1 : 2;
      // '3.00T' -> '3T', '1.50T' -> '1.5T': axis ticks stay short, precision is unchanged.
      const fixed = scaled.toFixed(decimals);
      const text = decimals === 0 ? fixed : fixed.replace(/0+$/, '').replace(/\.$/, '');
      return `${dropNegativeZero(text)}${suffix}`;
    }
  }
  return formatPrice(value);
}

/** Axis tick of a price axis: compact above a million so the label column stays narrow. */
export function formatAxisPrice(value: number): string {
  return Math.abs(value) >= 1e6 ? formatCompact(value) : formatPrice(value);
}

/**
 * The label of one bar's openTime (UTC ISO string) at the timeframe's natural precision:
 * 1M -> 2022-02, 1w/1d -> 2022-02-21, 4h/1h -> 2022-02-21 08:00.
 */
export function formatBarTime(openTime: string, timeframe: Timeframe): string {
  const iso = new Date(openTime).toISOString();
  switch (timeframe) {
    case '1M':
      return iso.slice(0, 7);
    case '1w':
    case '1d':
      return iso.slice(0, 10);
    case '4h':
    case '1h':
      return `${iso.slice(0, 10)} ${iso.slice(11, 16)}`;
  }
}

/** 4h and 1h bars: their labels carry a clock time, which only means something with a zone. */
export function isIntraday(timeframe: Timeframe): boolean {
  return timeframe === '4h' || timeframe === '1h';
}

/**
 * x-axis tick label of a bar: the same text as in the description (formatBarTime), so a date the
 * description quotes can be found on the axis. Intraday labels keep the year: '01-05 13:00' reads
 * as 1 May in half the world, '2026-01-05 13:00' reads one way only.
 */
export function formatAxisTime(openTime: string, timeframe: Timeframe): string {
  return formatBarTime(openTime, timeframe);
}

/**
 * The time axis name: what a label is (a bar's open) and its time zone. Every timeframe says UTC:
 * a daily or weekly bar opens at 00:00 UTC, which is the previous evening in New York.
 */
export function timeAxisName(timeframe: Timeframe): string {
  switch (timeframe) {
    case '1M':
      return 'Month (UTC)';
    case '1w':
      return 'Week starting (UTC)';
    case '1d':
      return 'Day (UTC)';
    case '4h':
    case '1h':
      return 'Bar open time (UTC)';
  }
}
