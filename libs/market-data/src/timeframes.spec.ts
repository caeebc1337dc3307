import type { Timeframe } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import {
  addBuckets,
  bucketStart,
  canResample,
  formatTimestamp,
  nextBucketStart,
} from './timeframes';

const t = (iso: string): number => Date.parse(iso);
const start = (iso: string, tf: Timeframe): string => formatTimestamp(bucketStart(t(iso), tf));

describe('bucketStart: exchange UTC boundaries', () => {
  it('aligns 4h buckets to 00/04/08/12/16/20 UTC', () => {
    expect(start('2026-03-01T00:00:00Z', '4h')).toBe('2026-03-01T00:00:00Z');
    expect(start('2026-03-01T03:59:59.999Z', '4h')).toBe('2026-03-01T00:00:00Z');
    expect(start('2026-03-01T04:00:00Z', '4h')).toBe('2026-03-01T04:00:00Z');
    expect(start('2026-03-01T13:30:00Z', '4h')).toBe('2026-03-01T12:00:00Z');
    expect(start('2026-03-01T23:59:00Z', '4h')).toBe('2026-03-01T20:00:00Z');
    // every 4h boundary of a day, not only the first
    const opens = Array.from({ length: 24 }, (_, h) =>
      start(`2026-03-01T${String(h).padStart(2, '0')}:15:00Z`, '4h').slice(11, 13),
    );
    expect([...new Set(opens)]).toEqual(['00', '04', '08', '12', '16', '20']);
  });

  it('starts days at 00:00 UTC and hours on the hour', () => {
    expect(start('2026-03-01T23:59:59Z', '1d')).toBe('2026-03-01T00:00:00Z');
    expect(start('2026-03-01T10:59:59Z', '1h')).toBe('2026-03-01T10:00:00Z');
  });

  it('starts weeks on MONDAY 00:00 UTC', () => {
    // 2026-03-02 is a Monday; 2026-03-01 a Sunday (belongs to the week of Monday 02-23).
    expect(start('2026-03-02T00:00:00Z', '1w')).toBe('2026-03-02T00:00:00Z');
    expect(start('2026-03-08T23:59:59Z', '1w')).toBe('2026-03-02T00:00:00Z');
    expect(start('2026-03-01T12:00:00Z', '1w')).toBe('2026-02-23T00:00:00Z');
    expect(start('2026-03-04T12:00:00Z', '1w')).toBe('2026-03-02T00:00:00Z');
    // 1970-01-01 was a Thursday: epoch-aligned 7-day buckets would start on Thursdays.
    expect(start('1970-01-08T00:00:00Z', '1w')).toBe('1970-01-05T00:00:00Z');
    expect(new Date(bucketStart(t('2024-12-31T08:00:00Z'), '1w')).getUTCDay()).toBe(1);
  });

  it('keeps a week that spans a month (and year) boundary in one bucket', () => {
    // Monday 2026-03-30 .. Sunday 2026-04-05
    expect(start('2026-04-05T23:00:00Z', '1w')).toBe('2026-03-30T00:00:00Z');
    expect(formatTimestamp(nextBucketStart(t('2026-03-31T00:00:00Z'), '1w'))).toBe(
      '2026-04-06T00:00:00Z',
    );
    // Monday 2024-12-30 .. Sunday 2025-01-05
    expect(start('2025-01-05T12:00:00Z', '1w')).toBe('2024-12-30T00:00:00Z');
  });

  it('starts months on the 1st 00:00 UTC', () => {
    expect(start('2026-02-28T23:59:59Z', '1M')).toBe('2026-02-01T00:00:00Z');
    expect(start('2024-02-29T12:00:00Z', '1M')).toBe('2024-02-01T00:00:00Z');
  });
});

describe('addBuckets / nextBucketStart', () => {
  const days = (from: string): number =>
    (nextBucketStart(t(from), '1M') - bucketStart(t(from), '1M')) / 86_400_000;

  it('gives calendar month lengths, including February of leap years', () => {
    expect(days('2024-02-10T00:00:00Z')).toBe(29);
    expect(days('2023-02-10T00:00:00Z')).toBe(28);
    expect(days('2000-02-10T00:00:00Z')).toBe(29); // divisible by 400
    expect(days('2100-02-10T00:00:00Z')).toBe(28); // divisible by 100 only
    expect(days('2026-01-31T00:00:00Z')).toBe(31);
    expect(days('2026-04-30T00:00:00Z')).toBe(30);
  });

  it('moves across years in both directions', () => {
    expect(formatTimestamp(addBuckets(t('2025-11-15T00:00:00Z'), '1M', 3))).toBe(
      '2026-02-01T00:00:00Z',
    );
    expect(formatTimestamp(addBuckets(t('2026-01-15T00:00:00Z'), '1M', -13))).toBe(
      '2024-12-01T00:00:00Z',
    );
    expect(formatTimestamp(addBuckets(t('2026-03-02T00:00:00Z'), '1w', -1))).toBe(
      '2026-02-23T00:00:00Z',
    );
    expect(formatTimestamp(addBuckets(t('2026-03-01T05:00:00Z'), '4h', -2))).toBe(
      '2026-02-28T20:00:00Z',
    );
  });
});

describe('canResample', () => {
  it('allows exact unions of source buckets only', () => {
    expect(canResample('4h', '1h')).toBe(true);
    expect(canResample('1M', '1d')).toBe(true);
    expect(canResample('1w', '1d')).toBe(true);
    expect(canResample('1d', '1d')).toBe(true);
    expect(canResample('1M', '1w')).toBe(false); // a week can straddle two months
    expect(canResample('1h', '1d')).toBe(false);
  });
});
