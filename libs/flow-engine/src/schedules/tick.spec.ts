import type { FlowSchedule } from '@tda/contracts';
import { validate } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import { makeSchedule } from '../testing/schedule-fixtures';
import { applyScheduleChanges } from './schedule-changes';
import { firedRunChanges } from './schedule-lifecycle';
import {
  DEFAULT_MISSED_GRACE_MS,
  MISSED_COUNT_LIMIT,
  decideTick,
  type ActiveRun,
  type TickDecision,
} from './tick';

const d = (iso: string) => new Date(iso);
const MINUTE = 60_000;
const runIdOf = (n: number) => `20260301-000000_BTC-USDT_r${String(n).padStart(4, '0')}`;

/** One ticker instance ticking at `ticks`: applies each decision as the orchestrator would. */
function tickThrough(
  start: FlowSchedule,
  ticks: readonly Date[],
  active: (schedule: FlowSchedule, now: Date) => ActiveRun = () => false,
): { schedule: FlowSchedule; fired: string[]; skipped: string[]; decisions: TickDecision[] } {
  let schedule = start;
  const fired: string[] = [];
  const skipped: string[] = [];
  const decisions: TickDecision[] = [];
  for (const now of ticks) {
    const decision = decideTick(schedule, now, active(schedule, now));
    decisions.push(decision);
    if (decision.kind === 'fire' || decision.kind === 'skip') {
      schedule = applyScheduleChanges(schedule, decision.changes);
    }
    if (decision.kind === 'not_due' && decision.changes !== null) {
      schedule = applyScheduleChanges(schedule, decision.changes);
    }
    if (decision.kind === 'fire') {
      fired.push(decision.slotAt);
      const record = firedRunChanges(schedule, decision.slotAt, runIdOf(fired.length));
      if (record !== null) schedule = applyScheduleChanges(schedule, record);
    }
    if (decision.kind === 'skip') skipped.push(`${decision.outcome}@${decision.slotAt}`);
    expect(validate.flowSchedule(schedule).ok).toBe(true);
  }
  return { schedule, fired, skipped, decisions };
}

function everyMinute(from: string, to: string, offsetMs = 7_000): Date[] {
  const ticks: Date[] = [];
  for (let t = d(from).getTime(); t <= d(to).getTime(); t += MINUTE) {
    ticks.push(new Date(t + offsetMs));
  }
  return ticks;
}

describe('decideTick', () => {
  const base = makeSchedule({
    createdAt: '2026-03-01T00:00:00.000Z',
    lastSlotAt: '2026-03-01T00:05:00.000Z',
    nextSlotAt: '2026-03-01T00:10:00.000Z',
  });

  it('a disabled schedule never fires', () => {
    expect(decideTick({ ...base, enabled: false }, d('2026-03-01T09:00:00Z'), false)).toEqual({
      kind: 'disabled',
    });
  });

  it('nothing due: no write, unless the stored nextSlotAt is missing or stale', () => {
    const now = d('2026-03-01T00:09:59.999Z');
    expect(decideTick(base, now, false)).toEqual({
      kind: 'not_due',
      nextSlotAt: '2026-03-01T00:10:00.000Z',
      changes: null,
    });
    const { nextSlotAt: _dropped, ...withoutNext } = base;
    expect(decideTick(withoutNext, now, false)).toMatchObject({
      kind: 'not_due',
      changes: { nextSlotAt: '2026-03-01T00:10:00.000Z' },
    });
  });

  it('fires the due slot on time: cursor to the slot, nextSlotAt after now, lastFire claimed', () => {
    const now = d('2026-03-01T00:10:00.250Z');
    expect(decideTick(base, now, false)).toEqual({
      kind: 'fire',
      slotAt: '2026-03-01T00:10:00.000Z',
      missed: 0,
      changes: {
        lastSlotAt: '2026-03-01T00:10:00.000Z',
        nextSlotAt: '2026-03-01T00:15:00.000Z',
        lastFire: {
          slotAt: '2026-03-01T00:10:00.000Z',
          outcome: 'fired',
          at: '2026-03-01T00:10:00.250Z',
          missedCount: 0,
        },
      },
    });
  });

  it('a slot at or before createdAt (first decision) or the cursor is never due', () => {
    const fresh = makeSchedule({ createdAt: '2026-03-01T00:05:00.000Z' });
    expect(decideTick(fresh, d('2026-03-01T00:09:00Z'), false).kind).toBe('not_due');
    expect(decideTick(fresh, d('2026-03-01T00:10:00Z'), false)).toMatchObject({
      kind: 'fire',
      slotAt: '2026-03-01T00:10:00.000Z',
    });
  });

  it("catchUp 'skip': a late tick within the grace still fires; an older slot is skipped", () => {
    const late = new Date(d('2026-03-01T00:10:00Z').getTime() + DEFAULT_MISSED_GRACE_MS);
    expect(decideTick(base, late, false)).toMatchObject({ kind: 'fire', missed: 0 });
    const tooLate = new Date(late.getTime() + 1);
    expect(decideTick(base, tooLate, false)).toMatchObject({
      kind: 'skip',
      outcome: 'skipped_missed',
      slotAt: '2026-03-01T00:10:00.000Z',
      changes: {
        lastSlotAt: '2026-03-01T00:10:00.000Z',
        nextSlotAt: '2026-03-01T00:15:00.000Z',
        lastFire: { outcome: 'skipped_missed', reason: 'due 120 s ago (grace 120 s)' },
      },
    });
    expect(decideTick(base, tooLate, false, { missedGraceMs: 10 * MINUTE }).kind).toBe('fire');
  });

  it("after an outage: 'skip' fires the current slot and skips the older ones", () => {
    const now = d('2026-03-01T01:00:30Z'); // slots 00:10 .. 01:00 due
    expect(decideTick(base, now, false)).toMatchObject({
      kind: 'fire',
      slotAt: '2026-03-01T01:00:00.000Z',
      missed: 10,
      changes: { lastSlotAt: '2026-03-01T01:00:00.000Z', lastFire: { missedCount: 10 } },
    });
    expect(decideTick(base, d('2026-03-01T01:04:00Z'), false)).toMatchObject({
      kind: 'skip',
      outcome: 'skipped_missed',
      slotAt: '2026-03-01T01:00:00.000Z',
      missed: 10,
    });
  });

  it("catchUp 'latest': the latest due slot fires once, whatever its age", () => {
    const latest = { ...base, catchUp: 'latest' as const };
    const now = d('2026-03-01T01:04:00Z');
    const decision = decideTick(latest, now, false);
    expect(decision).toMatchObject({
      kind: 'fire',
      slotAt: '2026-03-01T01:00:00.000Z',
      missed: 10,
      changes: { nextSlotAt: '2026-03-01T01:05:00.000Z' },
    });
    if (decision.kind !== 'fire') throw new Error('expected a fire');
    const after = applyScheduleChanges(latest, decision.changes);
    const recorded = applyScheduleChanges(
      after,
      firedRunChanges(after, decision.slotAt, runIdOf(1)) ?? {},
    );
    expect(decideTick(recorded, now, false).kind).toBe('not_due');
  });

  it('counts at most MISSED_COUNT_LIMIT missed slots', () => {
    const perMinute = { ...base, cron: '* * * * *', catchUp: 'latest' as const };
    expect(decideTick(perMinute, d('2026-04-01T00:00:00Z'), false)).toMatchObject({
      kind: 'fire',
      slotAt: '2026-04-01T00:00:00.000Z',
      missed: MISSED_COUNT_LIMIT,
    });
  });

  it("overlap 'skip': skipped while the previous run is active, deferred when unknown", () => {
    const now = d('2026-03-01T00:10:05Z');
    expect(decideTick(base, now, true)).toMatchObject({
      kind: 'skip',
      outcome: 'skipped_overlap',
      changes: {
        lastSlotAt: '2026-03-01T00:10:00.000Z',
        lastFire: { outcome: 'skipped_overlap', reason: 'the previous run is still active' },
      },
    });
    expect(decideTick(base, now, 'unknown')).toEqual({
      kind: 'deferred',
      slotAt: '2026-03-01T00:10:00.000Z',
      reason: 'overlap_unknown',
    });
    const allow = { ...base, overlap: 'allow' as const };
    expect(decideTick(allow, now, true).kind).toBe('fire');
    expect(decideTick(allow, now, 'unknown').kind).toBe('fire');
  });

  it('a claimed slot without its run is completed before anything newer', () => {
    const claimed = makeSchedule({
      lastSlotAt: '2026-03-01T00:10:00.000Z',
      lastFire: {
        slotAt: '2026-03-01T00:10:00.000Z',
        outcome: 'fired',
        at: '2026-03-01T00:10:01.000Z',
      },
    });
    expect(decideTick(claimed, d('2026-03-01T00:30:00Z'), false)).toEqual({
      kind: 'complete_fire',
      slotAt: '2026-03-01T00:10:00.000Z',
    });
    const recorded = applyScheduleChanges(
      claimed,
      firedRunChanges(claimed, '2026-03-01T00:10:00Z', runIdOf(9)) ?? {},
    );
    expect(recorded).toMatchObject({ lastRunId: runIdOf(9), lastFire: { runId: runIdOf(9) } });
    expect(decideTick(recorded, d('2026-03-01T00:30:00Z'), false)).toMatchObject({
      kind: 'fire',
      slotAt: '2026-03-01T00:30:00.000Z',
    });
  });

  it('a stale read with an older clock finds nothing due (the cursor never goes back)', () => {
    const ahead = makeSchedule({ lastSlotAt: '2026-03-01T00:20:00.000Z' });
    expect(decideTick(ahead, d('2026-03-01T00:16:00Z'), false)).toEqual({
      kind: 'not_due',
      nextSlotAt: '2026-03-01T00:25:00.000Z',
      changes: { nextSlotAt: '2026-03-01T00:25:00.000Z' },
    });
  });
});

describe('decideTick through DST (a tick every minute)', () => {
  it('America/New_York daily 02:30: one run a day; the spring-forward day fires at 03:00 EDT', () => {
    const start = makeSchedule({
      cron: '30 2 * * *',
      timeZone: 'America/New_York',
      createdAt: '2026-03-07T00:00:00.000Z',
    });
    const { fired, skipped } = tickThrough(
      start,
      everyMinute('2026-03-07T05:00:00Z', '2026-03-09T09:00:00Z'),
    );
    expect(fired).toEqual([
      '2026-03-07T07:30:00.000Z',
      '2026-03-08T07:00:00.000Z',
      '2026-03-09T06:30:00.000Z',
    ]);
    expect(skipped).toEqual([]);
  });

  it('America/New_York fall back: daily 01:30 fires once; 02:30 fires once', () => {
    for (const [cron, expected] of [
      ['30 1 * * *', '2026-11-01T05:30:00.000Z'],
      ['30 2 * * *', '2026-11-01T07:30:00.000Z'],
    ] as const) {
      const start = makeSchedule({
        cron,
        timeZone: 'America/New_York',
        createdAt: '2026-11-01T00:00:00.000Z',
      });
      const { fired } = tickThrough(
        start,
        everyMinute('2026-11-01T03:00:00Z', '2026-11-01T12:00:00Z'),
      );
      expect(fired).toEqual([expected]);
    }
  });

  it('Europe/London daily 02:30: once a day through both transitions', () => {
    for (const [from, to, expected] of [
      [
        '2026-03-28T00:00:00Z',
        '2026-03-29T04:00:00Z',
        ['2026-03-28T02:30:00.000Z', '2026-03-29T01:30:00.000Z'],
      ],
      [
        '2026-10-24T00:00:00Z',
        '2026-10-25T04:00:00Z',
        ['2026-10-24T01:30:00.000Z', '2026-10-25T02:30:00.000Z'],
      ],
    ] as const) {
      const start = makeSchedule({
        cron: '30 2 * * *',
        timeZone: 'Europe/London',
        createdAt: from,
      });
      expect(tickThrough(start, everyMinute(from, to)).fired).toEqual(expected);
    }
  });

  it('*/5 in UTC ticking every minute fires every slot once; duplicate ticks change nothing', () => {
    const start = makeSchedule({ createdAt: '2026-03-01T00:00:00.000Z' });
    const ticks = everyMinute('2026-03-01T00:00:00Z', '2026-03-01T01:00:00Z').flatMap((t) => [
      t,
      t,
    ]);
    const { fired, schedule } = tickThrough(start, ticks);
    expect(fired).toHaveLength(12);
    expect(new Set(fired).size).toBe(12);
    expect(fired[0]).toBe('2026-03-01T00:05:00.000Z');
    expect(schedule).toMatchObject({
      lastSlotAt: '2026-03-01T01:00:00.000Z',
      nextSlotAt: '2026-03-01T01:05:00.000Z',
    });
  });

  it("overlap 'skip' with runs lasting 7 minutes: every other */5 slot is skipped", () => {
    const start = makeSchedule({ createdAt: '2026-03-01T00:00:00.000Z' });
    const runEnds = new Map<string, number>();
    const { fired, skipped } = tickThrough(
      start,
      everyMinute('2026-03-01T00:00:00Z', '2026-03-01T00:30:00Z'),
      (schedule, now) => {
        // The run of lastRunId lasts 7 minutes from its slot.
        const runId = schedule.lastRunId;
        if (runId === undefined) return false;
        const fire = schedule.lastFire;
        if (!runEnds.has(runId) && fire?.runId === runId) {
          runEnds.set(runId, Date.parse(fire.slotAt) + 7 * MINUTE);
        }
        return now.getTime() < (runEnds.get(runId) ?? 0);
      },
    );
    expect(fired).toEqual([
      '2026-03-01T00:05:00.000Z',
      '2026-03-01T00:15:00.000Z',
      '2026-03-01T00:25:00.000Z',
    ]);
    expect(skipped).toEqual([
      'skipped_overlap@2026-03-01T00:10:00.000Z',
      'skipped_overlap@2026-03-01T00:20:00.000Z',
      'skipped_overlap@2026-03-01T00:30:00.000Z',
    ]);
  });
});
