import { TIMEFRAMES, type Timeframe } from '@tda/contracts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * Exchange-style UTC bucket boundaries for every timeframe (the same as Binance klines):
 * 1h on the hour, 4h at 00/04/08/12/16/20 UTC, 1d at 00:00 UTC, 1w on MONDAY 00:00 UTC,
 * 1M on the 1st of the month 00:00 UTC. All times are epoch milliseconds.
 */
export function bucketStart(time: number, timeframe: Timeframe): number {
  switch (timeframe) {
    case '1h':
      return floorTo(time, HOUR);
    case '4h':
      return floorTo(time, 4 * HOUR);
    case '1d':
      return floorTo(time, DAY);
    case '1w': {
      const day = floorTo(time, DAY);
      // getUTCDay: 0 = Sunday … 6 = Saturday; days since the last Monday:
      const sinceMonday = (new Date(day).getUTCDay() + 6) % 7;
      return day - sinceMonday * DAY;
    }
    case '1M': {
      const d = new Date(time);
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
    }
  }
}

/** The start of the bucket `count` buckets after the one containing `time` (count may be < 0). */
export function addBuckets(time: number, timeframe: Timeframe, count: number): number {
  const start = bucketStart(time, timeframe);
  if (timeframe === '1M') {
    const d = new Date(start);
    // Date.UTC normalises month overflow/underflow (month 13 = January of the next year).
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + count, 1);
  }
  return start + count * fixedDurationMs(timeframe);
}

/** The open time of the bucket after the one containing `time`. */
export function nextBucketStart(time: number, timeframe: Timeframe): number {
  return addBuckets(time, timeframe, 1);
}

/** Duration of one bucket of a fixed-length timeframe; months have no fixed length. */
export function fixedDurationMs(timeframe: Exclude<Timeframe, '1M'>): number {
  switch (timeframe) {
    case '1h':
      return HOUR;
    case '4h':
      return 4 * HOUR;
    case '1d':
      return DAY;
    case '1w':
      return 7 * DAY;
  }
}

/**
 * Whether every `target` bucket is a union of whole `source` buckets, so that resampling is exact.
 * True for any coarser target except 1M from 1w (a week can straddle two months).
 */
export function canResample(target: Timeframe, source: Timeframe): boolean {
  if (target === '1M' && source === '1w') return false;
  return TIMEFRAMES.indexOf(target) >= TIMEFRAMES.indexOf(source);
}

export function isTimeframe(value: unknown): value is Timeframe {
  return typeof value === 'string' && (TIMEFRAMES as readonly string[]).includes(value);
}

/** ISO-8601 UTC without milliseconds when they are zero, as in the contract examples. */
export function formatTimestamp(time: number): string {
  return new Date(time).toISOString().replace('.000Z', 'Z');
}

function floorTo(time: number, unit: number): number {
  return Math.floor(time / unit) * unit;
}
