import type { Timeframe } from '@tda/contracts';
import type { Candle, IncompleteBucketPolicy } from './candle';
import { MarketDataError } from './market-data.errors';
import { bucketStart, canResample, formatTimestamp, nextBucketStart } from './timeframes';

/** A resampled bucket and which of its ends the source data covers. */
export interface Bucket {
  openTime: number;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
  /** The source data starts after the bucket's open time (history begins mid-bucket). */
  missingStart: boolean;
  /** The source data stops before the bucket's end (the still-forming bucket). */
  missingEnd: boolean;
}

export interface ResampleOptions {
  /** Timeframe of the source rows. */
  from: Timeframe;
  /** Timeframe of the buckets to build (equal to `from` or coarser). */
  to: Timeframe;
  /**
   * Where the source data stops (exclusive, ms). Default: the end of the last source row. A live
   * source passes "now", so that the still-forming bucket counts as incomplete.
   */
  coverageEnd?: number;
}

/** Source rows that cannot be resampled (unordered, misaligned): a data defect, not user input. */
export class ResampleInputError extends MarketDataError {
  constructor(message: string) {
    super('MARKET_DATA_UNAVAILABLE', message, { retryable: false });
  }
}

/**
 * Aggregates ascending source rows into UTC buckets of `options.to` (see timeframes.ts for the
 * boundaries): open = first open, high = max high, low = min low, close = last close, volume =
 * sum (rounded to 8 decimals, to drop float noise such as 3370.9808700000003).
 *
 * A bucket is complete when the source data covers it entirely: it starts at or after the first
 * source row (else `missingStart`) and ends at or before `coverageEnd` (else `missingEnd`). Only
 * the first and the last bucket can be incomplete; a gap inside the data does not make a bucket
 * incomplete (the exchange had no trades then), exactly as an exchange builds its own klines.
 */
export function resample(rows: readonly Candle[], options: ResampleOptions): Bucket[] {
  const { from, to } = options;
  if (!canResample(to, from)) {
    throw new ResampleInputError(`cannot resample ${from} rows to ${to}`);
  }
  const first = rows[0];
  const last = rows[rows.length - 1];
  if (first === undefined || last === undefined) return [];
  const coverageStart = first.openTime;
  const coverageEnd = options.coverageEnd ?? nextBucketStart(last.openTime, from);

  const buckets: Bucket[] = [];
  let current: Bucket | undefined;
  let previousOpen = -Infinity;
  for (const row of rows) {
    if (row.openTime <= previousOpen) {
      throw new ResampleInputError(`source rows not ascending at ${formatTimestamp(row.openTime)}`);
    }
    if (bucketStart(row.openTime, from) !== row.openTime) {
      throw new ResampleInputError(
        `source row ${formatTimestamp(row.openTime)} is not aligned to a ${from} boundary`,
      );
    }
    previousOpen = row.openTime;
    const start = bucketStart(row.openTime, to);
    if (current === undefined || current.openTime !== start) {
      current = {
        openTime: start,
        open: row.open,
        high: row.high,
        low: row.low,
        close: row.close,
        volume: row.volume,
        missingStart: start < coverageStart,
        missingEnd: nextBucketStart(start, to) > coverageEnd,
      };
      buckets.push(current);
    } else {
      current.high = Math.max(current.high, row.high);
      current.low = Math.min(current.low, row.low);
      current.close = row.close;
      current.volume = roundVolume(current.volume + row.volume);
    }
  }
  return buckets;
}

/**
 * Applies the artifact's incomplete-bucket policy. A leading incomplete bucket (history that starts
 * mid-bucket) is always dropped: its open would not be the bucket's real open, and it is not the
 * "still-forming" bucket the contract lets us mark. The trailing incomplete bucket is dropped
 * ('dropped') or kept with `complete: false` ('marked').
 */
export function applyIncompleteBucketPolicy(
  buckets: readonly Bucket[],
  policy: IncompleteBucketPolicy,
): Candle[] {
  const candles: Candle[] = [];
  for (const { missingStart, missingEnd, ...candle } of buckets) {
    if (missingStart) continue;
    if (!missingEnd) candles.push(candle);
    else if (policy === 'marked') candles.push({ ...candle, complete: false });
  }
  return candles;
}

function roundVolume(volume: number): number {
  return Number(volume.toFixed(8));
}
