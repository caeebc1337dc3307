import type { DataCoverage } from './candle-source.port';
import { AsOfOutOfRangeError, InvalidAsOfError, MarketDataError } from './market-data.errors';
import { formatTimestamp } from './timeframes';

/**
 * The one moment a run describes (`scope.asOf`, fixed at trigger). Every timeframe of the run is
 * cut at it, so a run never mixes markets or periods: a 1w report and a 1d report of the same run
 * end at the same instant.
 */

/** Whether `asOf` lies within the coverage: from < asOf <= to (no lower bound when from is null). */
export function isAsOfCovered(coverage: DataCoverage, asOf: number): boolean {
  return (coverage.from === null || coverage.from < asOf) && asOf <= coverage.to;
}

/** Throws AsOfOutOfRangeError (INVALID_REQUEST, naming the range) unless `asOf` is covered. */
export function assertAsOfCovered(coverage: DataCoverage, asOf: number): void {
  if (!isAsOfCovered(coverage, asOf)) throw new AsOfOutOfRangeError(coverage, asOf);
}

/**
 * The asOf of a run over these coverages (one per timeframe the run reads), epoch ms.
 * Default: the earliest `to`, i.e. the newest moment that every timeframe has complete data for
 * (bundled data: 2026-09-20T00:00:00Z for every timeframe of both symbols; live: the start of the
 * current hour). A requested asOf is kept as it is. Either must satisfy `from < asOf <= to` for
 * every coverage, else AsOfOutOfRangeError for the first coverage that does not reach it (so a
 * run whose timeframes do not overlap in time is refused instead of mixing periods).
 */
export function resolveAsOf(coverages: readonly DataCoverage[], requested?: number): number {
  if (coverages.length === 0) {
    throw new MarketDataError(
      'INTERNAL_ERROR',
      'resolveAsOf needs the coverage of at least one timeframe',
    );
  }
  if (requested !== undefined && !Number.isFinite(requested)) {
    throw new InvalidAsOfError(requested, 'is not a time');
  }
  const asOf = requested ?? Math.min(...coverages.map((coverage) => coverage.to));
  for (const coverage of coverages) assertAsOfCovered(coverage, asOf);
  return asOf;
}

const RFC_3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/**
 * An RFC 3339 date-time (`2026-09-20T00:00:00Z`, fractions and `+02:00` offsets allowed) → epoch
 * ms (sub-millisecond digits truncated). Anything else, including impossible dates such as
 * February 30th, throws InvalidAsOfError (INVALID_REQUEST, `details.field: 'scope.asOf'`).
 */
export function parseAsOf(value: string): number {
  const match = RFC_3339.exec(value);
  if (match === null) throw new InvalidAsOfError(value, 'is not an RFC 3339 date-time');
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const offsetHours = Number(match[10] ?? '0');
  const offsetMinutes = Number(match[11] ?? '0');
  const date = new Date(Date.UTC(year, month - 1, day));
  const valid =
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month - 1 &&
    date.getUTCDate() === day &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59 &&
    offsetHours <= 23 &&
    offsetMinutes <= 59;
  if (!valid) throw new InvalidAsOfError(value, 'is not a valid date-time');
  const millis = Math.floor(Number(`0${match[7] ?? ''}`) * 1000);
  const offset = (match[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  return Date.UTC(year, month - 1, day, hour, minute, second, millis) - offset;
}

/** Epoch ms → RFC 3339 UTC (`2026-09-20T00:00:00Z`; milliseconds only when not zero). */
export function formatAsOf(time: number): string {
  return formatTimestamp(time);
}
