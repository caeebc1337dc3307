import { InvalidRequestError } from './errors';

/**
 * Decisions never read the clock: `now` is always a parameter. Stored timestamps are RFC 3339
 * UTC strings (Date#toISOString), which is what the Timestamp contract requires.
 */
export function toTimestamp(now: Date): string {
  if (Number.isNaN(now.getTime()))
    throw new InvalidRequestError('invalid date', { now: String(now) });
  return now.toISOString();
}

export function addMs(now: Date, ms: number): string {
  return toTimestamp(new Date(now.getTime() + ms));
}

/** Milliseconds since epoch of a stored timestamp, or undefined when absent/unparseable. */
export function timestampMs(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

/** True when the stored timestamp is at or before `now` (a passed deadline / expired lease). */
export function isAtOrBefore(value: unknown, now: Date): boolean {
  const ms = timestampMs(value);
  return ms !== undefined && ms <= now.getTime();
}
