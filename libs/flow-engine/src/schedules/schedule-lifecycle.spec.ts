import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { validate } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import { makeSchedule } from '../testing/schedule-fixtures';
import { nextSlotAfter, parseSchedule } from './cron';
import { applyScheduleChanges, isEmptyScheduleChanges } from './schedule-changes';
import {
  failedFireChanges,
  firedRunChanges,
  newSchedule,
  pauseChanges,
  resumeChanges,
} from './schedule-lifecycle';

const identity = {
  scheduleId: 'sch_4k9m2x7q1w8e5r3t6y0u',
  ownerId: 'alice',
  now: new Date('2026-09-15T10:00:00.000Z'),
};
const RUN = '20260920-000512_BTC-USDT_q7r2mx';

describe('newSchedule', () => {
  it('applies the defaults and computes the first slot; the document is valid', () => {
    const result = newSchedule(
      {
        flowKey: 'scheduled_month_week_report_v1',
        scope: { symbol: 'BTC-USDT' },
        cron: '0 6 1 * *',
      },
      identity,
    );
    expect(result).toEqual({
      ok: true,
      schedule: {
        schemaVersion: 1,
        scheduleId: identity.scheduleId,
        ownerId: 'alice',
        flowKey: 'scheduled_month_week_report_v1',
        scope: { symbol: 'BTC-USDT' },
        cron: '0 6 1 * *',
        timeZone: 'UTC',
        enabled: true,
        catchUp: 'skip',
        overlap: 'skip',
        createdAt: '2026-09-15T10:00:00.000Z',
        updatedAt: '2026-09-15T10:00:00.000Z',
        nextSlotAt: '2026-10-01T06:00:00.000Z',
      },
    });
    if (result.ok) expect(validate.flowSchedule(result.schedule).ok).toBe(true);
  });

  it('keeps the given options, normalizes cron and zone; a paused schedule has no nextSlotAt', () => {
    const result = newSchedule(
      {
        flowKey: 'recommendation_with_account_v1',
        scope: { symbol: 'BTC-USDT', accountId: 'demo' },
        cron: ' 0  1 * * * ',
        timeZone: 'europe/london',
        enabled: false,
        catchUp: 'latest',
        overlap: 'allow',
        minSignalStrength: 0.6,
        description: 'nightly',
      },
      identity,
    );
    expect(result).toMatchObject({
      ok: true,
      schedule: {
        cron: '0 1 * * *',
        timeZone: 'Europe/London',
        enabled: false,
        catchUp: 'latest',
        overlap: 'allow',
        minSignalStrength: 0.6,
        description: 'nightly',
      },
    });
    if (result.ok) expect(result.schedule).not.toHaveProperty('nextSlotAt');
  });

  it('refuses an invalid cron or an unknown zone, naming the field', () => {
    const base = { flowKey: 'x_v1', scope: { symbol: 'BTC-USDT' } };
    expect(newSchedule({ ...base, cron: '0 0 31 2 *' }, identity)).toMatchObject({
      ok: false,
      field: 'cron',
    });
    expect(newSchedule({ ...base, cron: '0 0 * * *', timeZone: 'Mars/Base' }, identity)).toEqual({
      ok: false,
      field: 'timeZone',
      message: "unknown time zone 'Mars/Base'",
    });
  });
});

describe('pause and resume', () => {
  const schedule = makeSchedule({
    lastSlotAt: '2026-03-01T00:05:00.000Z',
    nextSlotAt: '2026-03-01T00:10:00.000Z',
  });

  it('pause takes the schedule out of the ticker; pausing twice writes nothing', () => {
    const changes = pauseChanges(schedule);
    expect(changes).toEqual({ enabled: false, nextSlotAt: null });
    const paused = applyScheduleChanges(schedule, changes ?? {});
    expect(paused).not.toHaveProperty('nextSlotAt');
    expect(validate.flowSchedule(paused).ok).toBe(true);
    expect(pauseChanges(paused)).toBeNull();
  });

  it('resume starts after the resume time: the paused slots are not caught up', () => {
    const paused = applyScheduleChanges(schedule, pauseChanges(schedule) ?? {});
    const changes = resumeChanges(paused, new Date('2026-03-01T03:02:10.000Z'));
    expect(changes).toEqual({
      enabled: true,
      lastSlotAt: '2026-03-01T03:02:10.000Z',
      nextSlotAt: '2026-03-01T03:05:00.000Z',
    });
    expect(resumeChanges(schedule, new Date())).toBeNull();
    // An earlier clock never moves the cursor back.
    const ahead = { ...paused, lastSlotAt: '2026-03-01T04:00:00.000Z' };
    expect(resumeChanges(ahead, new Date('2026-03-01T03:02:10.000Z'))).toMatchObject({
      lastSlotAt: '2026-03-01T04:00:00.000Z',
      nextSlotAt: '2026-03-01T04:05:00.000Z',
    });
  });
});

describe('recording a fired slot', () => {
  const claimed = makeSchedule({
    lastSlotAt: '2026-03-01T00:10:00.000Z',
    lastFire: {
      slotAt: '2026-03-01T00:10:00.000Z',
      outcome: 'fired',
      at: '2026-03-01T00:10:02.000Z',
    },
  });

  it('firedRunChanges records the run once, only for the pending slot', () => {
    const changes = firedRunChanges(claimed, '2026-03-01T00:10:00Z', RUN);
    expect(changes).toEqual({
      lastFire: { ...claimed.lastFire, runId: RUN },
      lastRunId: RUN,
    });
    const recorded = applyScheduleChanges(claimed, changes ?? {});
    expect(validate.flowSchedule(recorded).ok).toBe(true);
    expect(firedRunChanges(recorded, '2026-03-01T00:10:00Z', RUN)).toBeNull();
    expect(firedRunChanges(claimed, '2026-03-01T00:15:00Z', RUN)).toBeNull();
    expect(firedRunChanges(makeSchedule(), '2026-03-01T00:10:00Z', RUN)).toBeNull();
  });

  it('failedFireChanges marks a pending fire failed with a bounded reason', () => {
    const changes = failedFireChanges(claimed, '2026-03-01T00:10:00.000Z', 'x'.repeat(300));
    expect(changes?.lastFire).toMatchObject({
      outcome: 'failed',
      slotAt: '2026-03-01T00:10:00.000Z',
    });
    expect(changes?.lastFire?.reason).toHaveLength(200);
    const failed = applyScheduleChanges(claimed, changes ?? {});
    expect(validate.flowSchedule(failed).ok).toBe(true);
    expect(failedFireChanges(failed, '2026-03-01T00:10:00.000Z', 'again')).toBeNull();
  });
});

describe('applyScheduleChanges', () => {
  it('replaces, removes with null, ignores what may not change, and copies', () => {
    const schedule = makeSchedule({ minSignalStrength: 0.5, description: 'd' });
    const changes = {
      minSignalStrength: null,
      description: 'new',
      scheduleId: 'sch_bbbbbbbbbbbbbbbbbbbb',
      ownerId: 'mallory',
    };
    const next = applyScheduleChanges(schedule, changes);
    expect(next).not.toHaveProperty('minSignalStrength');
    expect(next).toMatchObject({
      description: 'new',
      scheduleId: schedule.scheduleId,
      ownerId: 'alice',
    });
    expect(schedule.description).toBe('d');
    expect(isEmptyScheduleChanges({})).toBe(true);
    expect(isEmptyScheduleChanges({ enabled: true })).toBe(false);
  });
});

describe('the flow_schedule contracts', () => {
  const examples = join(__dirname, '../../../../contracts/examples');
  const load = (file: string): unknown => JSON.parse(readFileSync(join(examples, file), 'utf8'));

  it("the example's cursor agrees with its cron: nextSlotAt is the slot after lastSlotAt", () => {
    const result = validate.flowSchedule(load('flow_schedule.example.json'));
    if (!result.ok) throw new Error(JSON.stringify(result.issues));
    const { lastSlotAt, nextSlotAt } = result.value;
    expect(nextSlotAfter(result.value, new Date(lastSlotAt ?? ''))?.toISOString()).toBe(nextSlotAt);
    expect(parseSchedule(result.value.cron, result.value.timeZone).ok).toBe(true);
  });

  it('a request is closed and its scope has no asOf (a run’s asOf is its slot)', () => {
    const request = { flowKey: 'x_v1', scope: { symbol: 'BTC-USDT' }, cron: '0 6 * * *' };
    expect(validate.flowScheduleRequest(request).ok).toBe(true);
    expect(validate.flowScheduleRequest({ ...request, extra: 1 }).ok).toBe(false);
    const withAsOf = { ...request, scope: { symbol: 'BTC-USDT', asOf: '2026-01-01T00:00:00Z' } };
    expect(validate.flowScheduleRequest(withAsOf).ok).toBe(false);
    expect(validate.flowScheduleRequest({ ...request, cron: '0 6 * *' }).ok).toBe(false);
  });
});
