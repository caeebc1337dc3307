import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../errors';
import {
  latestSlotBetween,
  nextFireTimes,
  nextSlotAfter,
  parseSchedule,
  resolveTimeZone,
  slotsBetween,
  type CronSpec,
} from './cron';

const d = (iso: string) => new Date(iso);
const isoList = (dates: readonly Date[]) => dates.map((x) => x.toISOString());
const MINUTE = 60_000;
const DAY = 86_400_000;

function chain(spec: CronSpec, from: string, days: number): string[] {
  return isoList(slotsBetween(spec, d(from), new Date(d(from).getTime() + days * DAY), 10_000));
}

describe('parseSchedule', () => {
  it.each([
    ['*/5 * * * *', 'UTC', '*/5 * * * *', 'UTC'],
    [' 0  6 * *\tMON-FRI ', 'Europe/London', '0 6 * * MON-FRI', 'Europe/London'],
    ['0 0 1 jan,Jul *', 'utc', '0 0 1 jan,Jul *', 'UTC'],
    ['15,45 9-17/2 1-15 */3 0,7', 'US/Eastern', '15,45 9-17/2 1-15 */3 0,7', 'America/New_York'],
    ['0 0 29 2 *', 'Asia/Tokyo', '0 0 29 2 *', 'Asia/Tokyo'],
  ])('accepts %j in %s (normalized)', (cron, tz, normalized, zone) => {
    expect(parseSchedule(cron, tz)).toEqual({
      ok: true,
      spec: { cron: normalized, timeZone: zone },
    });
  });

  it.each([
    ['* * * *', /needs 5 fields.*got 4/],
    ['* * * * * *', /needs 5 fields.*got 6/],
    ['', /needs 5 fields.*got 0/],
    ['@daily', /needs 5 fields/],
    ['61 * * * *', /minute: 61/],
    ['0 24 * * *', /hour: 24/],
    ['0 0 0 * *', /invalid cron expression/],
    ['0 0 * 13 *', /invalid cron expression/],
    ['0 0 * * 8', /dayOfWeek: 8/],
    ['*/0 * * * *', /stepping: 0/],
    ['0 0 L * *', /day-of-month: 'L' is not a number/],
    ['0 0 15W * *', /day-of-month: '15W' is not a number/],
    ['0 0 * * 5#2', /day-of-week: '5#2' is not a value/],
    ['? * * * *', /minute: '\?' is not a value/],
    ['H * * * *', /minute: 'H' is not a number/],
    ['MON * * * *', /minute: 'MON' is not a number/],
    ['0 0 * * +1', /day-of-week: '\+1' is not a value/],
    ['0 0 * FOO *', /month: 'FOO' is not a number or one of JAN/],
    ['0 0 31 2 *', /never fires/],
    ['0 0 30,31 2 *', /never fires/],
    ['0 0 * * *'.repeat(20), /longer than 100/],
  ])('refuses the cron %j', (cron, message) => {
    const result = parseSchedule(cron, 'UTC');
    expect(result).toMatchObject({ ok: false, field: 'cron' });
    if (!result.ok) expect(result.message).toMatch(message);
  });

  it.each(['Mars/Base', '+01:00', 'Local', '', 'Europe/../etc', 'x'.repeat(65)])(
    'refuses the time zone %j before looking at the cron',
    (tz) => {
      expect(parseSchedule('not a cron', tz)).toMatchObject({
        ok: false,
        field: 'timeZone',
        message: expect.stringContaining('unknown time zone'),
      });
    },
  );

  it('resolves zone aliases the way the runtime does', () => {
    expect(resolveTimeZone('GMT')).toBe('UTC');
    expect(resolveTimeZone('Etc/GMT+5')).toBe('Etc/GMT+5');
    expect(resolveTimeZone('America/Argentina/Buenos_Aires')).toMatch(/Buenos_Aires$/);
    expect(resolveTimeZone('Nowhere/City')).toBeUndefined();
  });
});

describe('slot computations', () => {
  const every5: CronSpec = { cron: '*/5 * * * *', timeZone: 'UTC' };

  it('nextFireTimes: the next N slots strictly after the given time', () => {
    expect(isoList(nextFireTimes(every5, d('2026-03-01T00:05:00.000Z'), 3))).toEqual([
      '2026-03-01T00:10:00.000Z',
      '2026-03-01T00:15:00.000Z',
      '2026-03-01T00:20:00.000Z',
    ]);
    expect(isoList(nextFireTimes(every5, d('2026-03-01T00:04:59.999Z'), 1))).toEqual([
      '2026-03-01T00:05:00.000Z',
    ]);
    expect(() => nextFireTimes(every5, d('2026-03-01T00:00:00Z'), 0)).toThrow(InvalidRequestError);
    expect(() => nextFireTimes(every5, d('2026-03-01T00:00:00Z'), 101)).toThrow(
      InvalidRequestError,
    );
  });

  it('slotsBetween: (after, until], oldest first, bounded by max', () => {
    const from = d('2026-03-01T00:00:00.000Z');
    expect(isoList(slotsBetween(every5, from, d('2026-03-01T00:15:00.000Z'), 10))).toEqual([
      '2026-03-01T00:05:00.000Z',
      '2026-03-01T00:10:00.000Z',
      '2026-03-01T00:15:00.000Z',
    ]);
    expect(slotsBetween(every5, from, d('2026-03-01T00:15:00.000Z'), 2)).toHaveLength(2);
    expect(slotsBetween(every5, from, from, 10)).toEqual([]);
  });

  it('latestSlotBetween: the newest slot in (after, until], fast across a long gap', () => {
    const perMinute: CronSpec = { cron: '* * * * *', timeZone: 'UTC' };
    const started = Date.now();
    expect(
      latestSlotBetween(perMinute, d('2025-01-01T00:00:00Z'), d('2026-03-01T10:07:30Z')),
    ).toEqual(d('2026-03-01T10:07:00.000Z'));
    expect(Date.now() - started).toBeLessThan(500);
    const yearly: CronSpec = { cron: '0 0 1 1 *', timeZone: 'UTC' };
    expect(latestSlotBetween(yearly, d('2020-06-01T00:00:00Z'), d('2026-03-01T00:00:00Z'))).toEqual(
      d('2026-01-01T00:00:00.000Z'),
    );
    expect(
      latestSlotBetween(yearly, d('2026-01-01T00:00:00Z'), d('2026-12-31T00:00:00Z')),
    ).toBeUndefined();
    expect(latestSlotBetween(every5, d('2026-03-01T00:05:00Z'), d('2026-03-01T00:05:00Z'))).toBe(
      undefined,
    );
  });

  it('throws InvalidRequestError for a stored expression that does not parse', () => {
    expect(() => nextSlotAfter({ cron: '* * *', timeZone: 'UTC' }, new Date(0))).toThrow(
      InvalidRequestError,
    );
  });
});

describe('daylight saving time', () => {
  it('America/New_York daily 02:30: the missing 02:30 fires at 03:00 EDT, the same day, once', () => {
    const spec: CronSpec = { cron: '30 2 * * *', timeZone: 'America/New_York' };
    expect(chain(spec, '2026-03-07T00:00:00Z', 3)).toEqual([
      '2026-03-07T07:30:00.000Z', // 02:30 EST
      '2026-03-08T07:00:00.000Z', // 02:30 does not exist: 03:00 EDT
      '2026-03-09T06:30:00.000Z', // 02:30 EDT
    ]);
    // Fall back repeats 01:00-02:00 only: 02:30 happens once.
    expect(chain(spec, '2026-10-31T00:00:00Z', 3)).toEqual([
      '2026-10-31T06:30:00.000Z',
      '2026-11-01T07:30:00.000Z',
      '2026-11-02T07:30:00.000Z',
    ]);
  });

  it('America/New_York daily 01:30 on fall-back day fires once, at the first 01:30 (EDT)', () => {
    const spec: CronSpec = { cron: '30 1 * * *', timeZone: 'America/New_York' };
    expect(chain(spec, '2026-10-31T00:00:00Z', 3)).toEqual([
      '2026-10-31T05:30:00.000Z',
      '2026-11-01T05:30:00.000Z',
      '2026-11-02T06:30:00.000Z',
    ]);
  });

  it('Europe/London daily 02:30 fires once a day through both transitions', () => {
    const spec: CronSpec = { cron: '30 2 * * *', timeZone: 'Europe/London' };
    expect(chain(spec, '2026-03-28T00:00:00Z', 3)).toEqual([
      '2026-03-28T02:30:00.000Z', // GMT
      '2026-03-29T01:30:00.000Z', // BST from 01:00 UTC that day
      '2026-03-30T01:30:00.000Z',
    ]);
    expect(chain(spec, '2026-10-24T00:00:00Z', 3)).toEqual([
      '2026-10-24T01:30:00.000Z',
      '2026-10-25T02:30:00.000Z', // GMT again
      '2026-10-26T02:30:00.000Z',
    ]);
  });

  it('an interval expression follows real time through the repeated hour', () => {
    const spec: CronSpec = { cron: '*/30 * * * *', timeZone: 'America/New_York' };
    const slots = chain(spec, '2026-11-01T04:45:00Z', 2.5 / 24);
    expect(slots).toEqual([
      '2026-11-01T05:00:00.000Z', // 01:00 EDT
      '2026-11-01T05:30:00.000Z',
      '2026-11-01T06:00:00.000Z', // 01:00 EST
      '2026-11-01T06:30:00.000Z',
      '2026-11-01T07:00:00.000Z',
    ]);
  });

  it('*/5 in UTC: every five minutes, nothing else', () => {
    const slots = slotsBetween(
      { cron: '*/5 * * * *', timeZone: 'UTC' },
      d('2026-03-08T00:00:00Z'),
      d('2026-03-09T00:00:00Z'),
      1000,
    );
    expect(slots).toHaveLength(288);
    expect(
      slots.every((s, i) => i === 0 || s.getTime() - (slots[i - 1]?.getTime() ?? 0) === 5 * MINUTE),
    ).toBe(true);
  });

  // The property that decided the library: the slots of a schedule are one sequence, whichever
  // instant a computation starts from (cron-parser 5.10 failed this around DST).
  it.each([
    ['30 2 * * *', 'America/New_York', '2026-03-08T04:00:00Z'],
    ['30 1 * * *', 'America/New_York', '2026-11-01T03:00:00Z'],
    ['15 1-3 * * *', 'America/New_York', '2026-03-08T04:00:00Z'],
    ['*/20 * * * *', 'Europe/London', '2026-10-24T23:00:00Z'],
  ])(
    '%s in %s: next and latest agree with the forward sequence from any start',
    (cron, tz, start) => {
      const spec: CronSpec = { cron, timeZone: tz };
      const from = d(start).getTime();
      const reference = slotsBetween(spec, new Date(from), new Date(from + 2 * DAY), 10_000).map(
        (s) => s.getTime(),
      );
      // Minute by minute through the transition (the 6 hours around it).
      for (let t = from; t < from + DAY / 4; t += MINUTE) {
        for (const offset of [0, 30_000]) {
          const at = t + offset;
          expect(nextSlotAfter(spec, new Date(at))?.getTime()).toBe(reference.find((s) => s > at));
          const latest = reference.filter((s) => s <= at).pop();
          expect(latestSlotBetween(spec, new Date(from), new Date(at))?.getTime()).toBe(latest);
        }
      }
    },
  );
});
