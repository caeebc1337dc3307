import { describe, expect, it } from 'vitest';
import type { Candle } from './candle';
import { applyIncompleteBucketPolicy, resample, ResampleInputError } from './resample';
import { formatTimestamp } from './timeframes';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const t = (iso: string): number => Date.parse(iso);

/** Consecutive rows from `first`, each `step` long; row i has open = i + 1, close = i + 2. */
function rows(first: string, count: number, step: number): Candle[] {
  return Array.from({ length: count }, (_, i) => ({
    openTime: t(first) + i * step,
    open: i + 1,
    high: i + 10,
    low: i + 0.5,
    close: i + 2,
    volume: 1,
  }));
}

const opens = (candles: ReadonlyArray<{ openTime: number }>): string[] =>
  candles.map((c) => formatTimestamp(c.openTime));

describe('resample', () => {
  it('aggregates OHLCV: first open, max high, min low, last close, summed volume', () => {
    const source: Candle[] = [
      { openTime: t('2026-03-02T00:00:00Z'), open: 10, high: 12, low: 9, close: 11, volume: 0.1 },
      { openTime: t('2026-03-02T01:00:00Z'), open: 11, high: 15, low: 10, close: 14, volume: 0.2 },
      { openTime: t('2026-03-02T02:00:00Z'), open: 14, high: 14, low: 7, close: 8, volume: 0.3 },
      { openTime: t('2026-03-02T03:00:00Z'), open: 8, high: 9, low: 8, close: 9, volume: 0.4 },
    ];
    expect(resample(source, { from: '1h', to: '4h' })).toEqual([
      {
        openTime: t('2026-03-02T00:00:00Z'),
        open: 10,
        high: 15,
        low: 7,
        close: 9,
        // 0.1 + 0.2 + 0.3 + 0.4 is 1.0000000000000002 in floating point
        volume: 1,
        missingStart: false,
        missingEnd: false,
      },
    ]);
  });

  it('aligns 4h buckets to 00/04/08/.. UTC and flags partial first/last buckets', () => {
    // 02:00 .. 13:00: the 00:00 bucket lacks its start, the 12:00 bucket its end
    const buckets = resample(rows('2026-03-02T02:00:00Z', 12, HOUR), { from: '1h', to: '4h' });
    expect(opens(buckets)).toEqual([
      '2026-03-02T00:00:00Z',
      '2026-03-02T04:00:00Z',
      '2026-03-02T08:00:00Z',
      '2026-03-02T12:00:00Z',
    ]);
    expect(buckets.map((b) => [b.missingStart, b.missingEnd])).toEqual([
      [true, false],
      [false, false],
      [false, false],
      [false, true],
    ]);
    // bucket 04:00 = rows 2..5 (04,05,06,07)
    expect(buckets[1]).toMatchObject({ open: 3, high: 15, low: 2.5, close: 7, volume: 4 });
  });

  it('builds Monday weeks, one of them spanning a month boundary', () => {
    // Mon 2026-03-23 .. Sun 2026-04-12: three whole weeks
    const days = rows('2026-03-23T00:00:00Z', 21, DAY);
    const weeks = resample(days, { from: '1d', to: '1w' });
    expect(opens(weeks)).toEqual([
      '2026-03-23T00:00:00Z',
      '2026-03-30T00:00:00Z',
      '2026-04-06T00:00:00Z',
    ]);
    // The week of Mon 03-30 holds 03-30, 03-31 and 04-01..04-05 (days 7..13)
    expect(weeks[1]).toMatchObject({ open: 8, close: 15, high: 23, low: 7.5, volume: 7 });
    expect(weeks.every((w) => !w.missingStart && !w.missingEnd)).toBe(true);
  });

  it('builds calendar months from days: 29 days in February 2024, 28 in 2023', () => {
    const leap = resample(rows('2024-02-01T00:00:00Z', 29, DAY), { from: '1d', to: '1M' });
    expect(leap).toHaveLength(1);
    expect(leap[0]).toMatchObject({ volume: 29, close: 30, missingEnd: false });
    // 28 days of February 2024 are NOT the whole month
    const short = resample(rows('2024-02-01T00:00:00Z', 28, DAY), { from: '1d', to: '1M' });
    expect(short[0]?.missingEnd).toBe(true);
    const common = resample(rows('2023-02-01T00:00:00Z', 28 + 31, DAY), { from: '1d', to: '1M' });
    expect(opens(common)).toEqual(['2023-02-01T00:00:00Z', '2023-03-01T00:00:00Z']);
    expect(common.map((m) => [m.volume, m.missingEnd])).toEqual([
      [28, false],
      [31, false],
    ]);
    expect(common[1]?.open).toBe(29); // 2023-03-01 is day index 28
  });

  it('marks the first bucket incomplete when history starts mid-bucket', () => {
    // Wed 03-04 .. Sun 03-15: the first week lacks Monday and Tuesday, the second is whole
    const weeks = resample(rows('2026-03-04T00:00:00Z', 12, DAY), { from: '1d', to: '1w' });
    expect(weeks.map((w) => [formatTimestamp(w.openTime), w.missingStart, w.missingEnd])).toEqual([
      ['2026-03-02T00:00:00Z', true, false],
      ['2026-03-09T00:00:00Z', false, false],
    ]);
    // Wed 03-04 .. Fri 03-13: the second week now lacks its weekend as well
    const shorter = resample(rows('2026-03-04T00:00:00Z', 10, DAY), { from: '1d', to: '1w' });
    expect(shorter.map((w) => [w.missingStart, w.missingEnd])).toEqual([
      [true, false],
      [false, true],
    ]);
  });

  it('uses coverageEnd (a live source passes now) to find the still-forming bucket', () => {
    const hours = rows('2026-03-02T00:00:00Z', 3, HOUR);
    const atHalfPast = resample(hours, {
      from: '1h',
      to: '1h',
      coverageEnd: t('2026-03-02T02:30:00Z'),
    });
    expect(atHalfPast.map((b) => b.missingEnd)).toEqual([false, false, true]);
    const afterwards = resample(hours, { from: '1h', to: '1h' });
    expect(afterwards.map((b) => b.missingEnd)).toEqual([false, false, false]);
  });

  it('does not treat a gap inside the data as an incomplete bucket', () => {
    const withGap = rows('2026-03-02T00:00:00Z', 12, HOUR).filter((_, i) => i !== 5);
    const buckets = resample(withGap, { from: '1h', to: '4h' });
    expect(buckets.map((b) => b.missingStart || b.missingEnd)).toEqual([false, false, false]);
    expect(buckets[1]?.volume).toBe(3);
  });

  it('returns nothing for no rows', () => {
    expect(resample([], { from: '1h', to: '1d' })).toEqual([]);
  });

  it('rejects unordered, duplicate or misaligned rows and impossible resampling', () => {
    const [a, b] = rows('2026-03-02T00:00:00Z', 2, HOUR);
    if (a === undefined || b === undefined) throw new Error('fixture');
    expect(() => resample([b, a], { from: '1h', to: '4h' })).toThrow(ResampleInputError);
    expect(() => resample([a, a], { from: '1h', to: '4h' })).toThrow(/not ascending/);
    expect(() =>
      resample([{ ...a, openTime: a.openTime + 60_000 }], { from: '1h', to: '4h' }),
    ).toThrow(/not aligned to a 1h boundary/);
    expect(() => resample([a], { from: '1w', to: '1M' })).toThrow(/cannot resample 1w rows to 1M/);
  });
});

describe('applyIncompleteBucketPolicy', () => {
  // 02:00 .. 13:00 → 4h buckets 00 (missing start), 04, 08, 12 (missing end)
  const buckets = resample(rows('2026-03-02T02:00:00Z', 12, HOUR), { from: '1h', to: '4h' });

  it("'dropped' leaves out both partial edges", () => {
    const candles = applyIncompleteBucketPolicy(buckets, 'dropped');
    expect(opens(candles)).toEqual(['2026-03-02T04:00:00Z', '2026-03-02T08:00:00Z']);
    expect(candles.some((c) => 'complete' in c)).toBe(false);
  });

  it("'marked' keeps the still-forming last bucket with complete=false, drops the partial first", () => {
    const candles = applyIncompleteBucketPolicy(buckets, 'marked');
    expect(opens(candles)).toEqual([
      '2026-03-02T04:00:00Z',
      '2026-03-02T08:00:00Z',
      '2026-03-02T12:00:00Z',
    ]);
    expect(candles.map((c) => c.complete)).toEqual([undefined, undefined, false]);
    expect(candles[2]).toEqual({
      openTime: t('2026-03-02T12:00:00Z'),
      open: 11,
      high: 21,
      low: 10.5,
      close: 13,
      volume: 2,
      complete: false,
    });
  });

  it('keeps a single forming bucket under marked when the data starts on its boundary', () => {
    const forming = resample(rows('2026-03-02T00:00:00Z', 3, HOUR), { from: '1h', to: '1d' });
    expect(applyIncompleteBucketPolicy(forming, 'marked').map((c) => c.complete)).toEqual([false]);
    expect(applyIncompleteBucketPolicy(forming, 'dropped')).toEqual([]);
  });
});
