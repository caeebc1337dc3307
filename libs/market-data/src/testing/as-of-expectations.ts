import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Timeframe } from '@tda/contracts';
import { expect } from 'vitest';
import { BUNDLED_DATASETS, findBundledSymbol } from '../bundled/bundled-catalogue';
import { parseCandleCsv } from '../bundled/candle-csv';
import type { Candle } from '../candle';
import { DEFAULT_BUNDLED_DATA_DIR } from '../data-dir';
import { applyIncompleteBucketPolicy, resample } from '../resample';
import { bucketStart, formatTimestamp, nextBucketStart } from '../timeframes';

/** What the as-of specs compute independently of the sources: straight from the CSV rows. */

export const t = (iso: string): number => Date.parse(iso);

/** The bundled default asOf (resolveAsOf over every bundled coverage). */
export const DEFAULT_AS_OF = t('2026-09-20T00:00:00Z');
/** An earlier asOf inside both the hourly and the daily data, in the middle of a 4h bucket. */
export const EARLIER_AS_OF = t('2026-06-15T13:00:00Z');

const cache = new Map<string, Candle[]>();

/** The rows of a bundled CSV file, parsed once. */
export function csvRows(file: string): Candle[] {
  let rows = cache.get(file);
  if (rows === undefined) {
    rows = parseCandleCsv(readFileSync(join(DEFAULT_BUNDLED_DATA_DIR, file), 'utf8'), file);
    cache.set(file, rows);
  }
  return rows;
}

/** The rows (and their timeframe) of the dataset the catalogue serves symbol/timeframe from. */
export function sourceRows(
  symbol: string,
  timeframe: Timeframe,
): { rows: Candle[]; tf: Timeframe } {
  const id = findBundledSymbol(symbol)?.datasets[timeframe];
  if (id === undefined) throw new Error(`no dataset for ${symbol} ${timeframe}`);
  const dataset = BUNDLED_DATASETS[id];
  return { rows: csvRows(dataset.file), tf: dataset.timeframe };
}

/** The hourly rows of a symbol (the finest bundled data). */
export function hourlyRows(symbol: string): Candle[] {
  return sourceRows(symbol, '1h').rows;
}

export function candleEnd(candle: Candle, timeframe: Timeframe): number {
  return nextBucketStart(candle.openTime, timeframe);
}

/**
 * The bucket of `timeframe` holding asOf, aggregated from `rows` (of timeframe `rowTf`) that lie
 * in it and ENDED by asOf, marked incomplete; undefined when no such row exists.
 */
export function expectedForming(
  rows: readonly Candle[],
  rowTf: Timeframe,
  timeframe: Timeframe,
  asOf: number,
): Candle | undefined {
  const start = bucketStart(asOf, timeframe);
  const inside = rows.filter((r) => r.openTime >= start && candleEnd(r, rowTf) <= asOf);
  const [forming] = applyIncompleteBucketPolicy(
    resample(inside, { from: rowTf, to: timeframe, coverageEnd: asOf }),
    'marked',
  );
  return forming?.complete === false ? forming : undefined;
}

/** The complete candles of `timeframe` built from rows that ended by asOf. */
export function expectedComplete(
  rows: readonly Candle[],
  rowTf: Timeframe,
  timeframe: Timeframe,
  asOf: number,
): Candle[] {
  const ended = rows.filter((r) => candleEnd(r, rowTf) <= asOf);
  return applyIncompleteBucketPolicy(resample(ended, { from: rowTf, to: timeframe }), 'dropped');
}

/**
 * The as-of invariants of any series cut at asOf: every complete candle ends by asOf, only the
 * last candle may be incomplete and it opens before asOf and ends after it.
 */
export function expectCutAt(candles: readonly Candle[], timeframe: Timeframe, asOf: number): void {
  const late = candles.filter((c) => c.complete !== false && candleEnd(c, timeframe) > asOf);
  expect(late.map((c) => formatTimestamp(c.openTime))).toEqual([]);
  candles.forEach((c, i) => {
    if (c.complete !== false) return;
    expect(i).toBe(candles.length - 1);
    expect(c.openTime).toBeLessThan(asOf);
    expect(candleEnd(c, timeframe)).toBeGreaterThan(asOf);
  });
}

/** [openTime, complete] of the last candle, for compact expectations. */
export function lastOf(candles: readonly Candle[]): [string, boolean] {
  const last = candles[candles.length - 1];
  if (last === undefined) throw new Error('no candles');
  return [formatTimestamp(last.openTime), last.complete !== false];
}
