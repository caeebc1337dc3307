/*
 * Cron library: croner (zero dependencies, IANA zones through Intl). Chosen over cron-parser
 * 5.10 after checking both minute by minute across DST transitions: cron-parser returned
 * different slots for the same schedule depending on where the iteration started (a daily 02:30
 * in New York on the spring-forward day was found from 00:00 but not from 03:00 local) and its
 * prev() disagreed with next(); croner's documented Vixie-cron DST rules held from every start
 * (cron.spec.ts keeps that check). Only nextRun is used here, so "the slots of a schedule" is one
 * forward sequence, whichever point a computation starts from.
 */
import { Cron } from 'croner';
import { InvalidRequestError } from '../errors';

/** A schedule's cron expression and time zone, as stored (normalized by parseSchedule). */
export interface CronSpec {
  cron: string;
  timeZone: string;
}

export type ScheduleParse =
  { ok: true; spec: CronSpec } | { ok: false; field: 'cron' | 'timeZone'; message: string };

/** Time zone names only (no offsets like +01:00): contracts/flow_schedule.schema.json TimeZone. */
const TIME_ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+){0,2}$/;
const TIME_ZONE_MAX_LENGTH = 64;
const CRON_MAX_LENGTH = 100;

const MONTH_NAMES = [
  'JAN',
  'FEB',
  'MAR',
  'APR',
  'MAY',
  'JUN',
  'JUL',
  'AUG',
  'SEP',
  'OCT',
  'NOV',
  'DEC',
];
const DAY_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];
const FIELDS: readonly { name: string; names?: readonly string[] }[] = [
  { name: 'minute' },
  { name: 'hour' },
  { name: 'day-of-month' },
  { name: 'month', names: MONTH_NAMES },
  { name: 'day-of-week', names: DAY_NAMES },
];

/** A fixed reference for "does it ever fire": parseSchedule must not read the clock. */
const EVER_FIRES_FROM = new Date('2000-01-01T00:00:00.000Z');

/** The IANA name the runtime resolves `name` to (utc → UTC, US/Eastern → America/New_York), or undefined. */
export function resolveTimeZone(name: string): string | undefined {
  if (name.length > TIME_ZONE_MAX_LENGTH || !TIME_ZONE_NAME.test(name)) return undefined;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

/** Why one item of a field (`1-5/2`, `*`, `MON`) is not standard cron syntax, or undefined. */
function itemProblem(item: string, names: readonly string[] | undefined): string | undefined {
  const match = /^(\*|[0-9A-Za-z]+(?:-[0-9A-Za-z]+)?)(?:\/([0-9]+))?$/.exec(item);
  if (match === null) return `'${item}' is not a value, a range, * or a step`;
  const values = (match[1] ?? '').split('-').filter((v) => v !== '*');
  for (const value of values) {
    if (/^[0-9]+$/.test(value)) continue;
    if (names?.includes(value.toUpperCase())) continue;
    return names === undefined
      ? `'${value}' is not a number`
      : `'${value}' is not a number or one of ${names.join(' ')}`;
  }
  return undefined;
}

/** The expression with single spaces, or why it is not a standard 5-field expression. */
function normalizeCron(cron: string): { ok: true; cron: string } | { ok: false; message: string } {
  if (cron.length > CRON_MAX_LENGTH) {
    return { ok: false, message: `longer than ${CRON_MAX_LENGTH} characters` };
  }
  const fields = cron.trim().split(/[ \t]+/);
  if (fields.length !== FIELDS.length || fields[0] === '') {
    return {
      ok: false,
      message: `needs 5 fields (minute hour day-of-month month day-of-week), got ${fields[0] === '' ? 0 : fields.length}`,
    };
  }
  for (const [index, field] of fields.entries()) {
    const spec = FIELDS[index];
    for (const item of field.split(',')) {
      const problem = itemProblem(item, spec?.names);
      if (problem !== undefined)
        return { ok: false, message: `${spec?.name ?? 'field'}: ${problem}` };
    }
  }
  return { ok: true, cron: fields.join(' ') };
}

function buildCron(spec: CronSpec): Cron {
  // no-wildcard: every time without * or a step in minute and hour is a fixed time for DST
  // (closer to Vixie cron than croner's default, which counts only single values).
  return new Cron(spec.cron, {
    timezone: spec.timeZone,
    mode: '5-part',
    fixedTimeRule: 'no-wildcard',
  });
}

/**
 * Checks and normalizes a schedule's cron expression and time zone (the 4xx of POST /schedules):
 * a standard 5-field expression (digits, `*`, `,`, `-`, `/`, month and day names; no seconds,
 * no `@daily`, `L`, `W`, `#`, `?` or `H` extensions), values in range, firing at least once; and
 * a time zone the runtime knows by an IANA name. Day-of-month and day-of-week both restricted
 * means either (Vixie cron). Minute granularity: every minute is the most frequent schedule.
 */
export function parseSchedule(cron: string, timeZone: string): ScheduleParse {
  const zone = resolveTimeZone(timeZone);
  if (zone === undefined) {
    return {
      ok: false,
      field: 'timeZone',
      message: `unknown time zone '${timeZone.slice(0, 64)}'`,
    };
  }
  const normalized = normalizeCron(cron);
  if (!normalized.ok) {
    return { ok: false, field: 'cron', message: `invalid cron expression: ${normalized.message}` };
  }
  const spec: CronSpec = { cron: normalized.cron, timeZone: zone };
  let parsed: Cron;
  try {
    parsed = buildCron(spec);
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^CronPattern:\s*/, '') : '';
    return {
      ok: false,
      field: 'cron',
      message: `invalid cron expression: ${reason.slice(0, 120)}`,
    };
  }
  if (parsed.nextRun(EVER_FIRES_FROM) === null) {
    return {
      ok: false,
      field: 'cron',
      message: 'the cron expression never fires (e.g. 31 February)',
    };
  }
  return { ok: true, spec };
}

/** Parsed expressions by spec: deciding a tick walks the same schedule many times. */
const cache = new Map<string, Cron>();
const CACHE_LIMIT = 512;

function cronOf(spec: CronSpec): Cron {
  const key = `${spec.timeZone}\n${spec.cron}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  const parsed = parseSchedule(spec.cron, spec.timeZone);
  if (!parsed.ok) {
    throw new InvalidRequestError(parsed.message, { field: parsed.field });
  }
  const built = buildCron(parsed.spec);
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(key, built);
  return built;
}

/** The first slot strictly after `after`, or undefined when the schedule has none left. */
export function nextSlotAfter(spec: CronSpec, after: Date): Date | undefined {
  return cronOf(spec).nextRun(after) ?? undefined;
}

/** The next `count` (1..100) fire times strictly after `after` ("show": the next 5). */
export function nextFireTimes(spec: CronSpec, after: Date, count: number): Date[] {
  if (!Number.isInteger(count) || count < 1 || count > 100) {
    throw new InvalidRequestError('count must be an integer in 1..100', { count });
  }
  return slotsBetween(spec, after, new Date(8.64e15), count);
}

/** Slots in (afterExclusive, untilInclusive], oldest first, at most `max`. */
export function slotsBetween(
  spec: CronSpec,
  afterExclusive: Date,
  untilInclusive: Date,
  max: number,
): Date[] {
  const parsed = cronOf(spec);
  const slots: Date[] = [];
  let cursor: Date | null = afterExclusive;
  while (slots.length < max) {
    cursor = parsed.nextRun(cursor);
    if (cursor === null || cursor.getTime() > untilInclusive.getTime()) break;
    slots.push(cursor);
  }
  return slots;
}

/**
 * The latest slot in (afterExclusive, atOrBefore], or undefined. Forward-only (nextRun) like
 * every other slot computation: it widens a window back from `atOrBefore` (1 min, 4 min, 16
 * min, ...) until the window holds a slot, then walks forward through it, so a long outage
 * costs a few dozen steps, not one per missed slot.
 */
export function latestSlotBetween(
  spec: CronSpec,
  afterExclusive: Date,
  atOrBefore: Date,
): Date | undefined {
  const lower = afterExclusive.getTime();
  const upper = atOrBefore.getTime();
  if (upper <= lower) return undefined;
  const parsed = cronOf(spec);
  for (let span = 60_000; ; span *= 4) {
    const start = Math.max(lower, upper - span);
    let slot = parsed.nextRun(new Date(start));
    if (slot !== null && slot.getTime() <= upper) {
      for (;;) {
        const next = parsed.nextRun(slot);
        if (next === null || next.getTime() > upper) return slot;
        slot = next;
      }
    }
    if (start === lower) return undefined;
  }
}
