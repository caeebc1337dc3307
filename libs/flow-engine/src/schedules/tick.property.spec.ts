import { validate, type FlowSchedule } from '@tda/contracts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { makeSchedule } from '../testing/schedule-fixtures';
import { nextSlotAfter, slotsBetween } from './cron';
import { applyScheduleChanges, type ScheduleChanges } from './schedule-changes';
import { slotIdempotencyKey } from './schedule-ids';
import { firedRunChanges } from './schedule-lifecycle';
import { DEFAULT_MISSED_GRACE_MS, decideTick, type ActiveRun } from './tick';

const MINUTE = 60_000;
const SPECS = [
  ['*/5 * * * *', 'UTC'],
  ['* * * * *', 'UTC'],
  ['0 * * * *', 'America/New_York'],
  ['30 2 * * *', 'America/New_York'],
  ['30 1 * * *', 'America/New_York'],
  ['30 2 * * *', 'Europe/London'],
  ['*/7 9-17 * * 1-5', 'Europe/London'],
  ['15,45 * * * *', 'Asia/Kolkata'],
  ['*/20 * * * *', 'Australia/Lord_Howe'],
] as const;
/** Around DST transitions (New York, London) and an ordinary night. */
const STARTS = [
  '2026-03-08T04:00:00.000Z',
  '2026-11-01T03:00:00.000Z',
  '2026-03-28T22:00:00.000Z',
  '2026-10-24T22:00:00.000Z',
  '2026-06-30T23:30:00.000Z',
];

const scheduleArb = fc
  .record({
    spec: fc.constantFrom(...SPECS),
    start: fc.constantFrom(...STARTS),
    catchUp: fc.constantFrom('skip' as const, 'latest' as const),
    overlap: fc.constantFrom('skip' as const, 'allow' as const),
  })
  .map(({ spec, start, catchUp, overlap }) =>
    makeSchedule({
      cron: spec[0],
      timeZone: spec[1],
      createdAt: start,
      updatedAt: start,
      catchUp,
      overlap,
      nextSlotAt: undefined,
    }),
  );

/** One step of one ticker instance: maybe re-read, move the clock, tick, maybe die mid-fire. */
const opArb = fc.record({
  instance: fc.constantFrom(0, 1),
  reread: fc.boolean(),
  advanceMs: fc.oneof(
    fc.constant(0),
    fc.integer({ min: 0, max: 2 * MINUTE }),
    fc.integer({ min: 0, max: 4 * 60 * MINUTE }),
  ),
  active: fc.constantFrom<ActiveRun>(false, false, true, 'unknown'),
  crashAfterClaim: fc.boolean(),
});

interface Stored {
  doc: FlowSchedule;
  version: number;
}

/** The world: one stored schedule, conditional writes, and POST /runs with idempotency keys. */
class World {
  stored: Stored;
  readonly runsByKey = new Map<string, string>();
  readonly claimed: string[] = [];
  readonly cursors: number[] = [];

  constructor(doc: FlowSchedule) {
    this.stored = { doc, version: 0 };
  }

  read(): Stored {
    return structuredClone(this.stored);
  }

  /** Conditional write on the version read; false when another write came first. */
  write(view: Stored, changes: ScheduleChanges): boolean {
    if (view.version !== this.stored.version) return false;
    const before = this.stored.doc.lastSlotAt;
    const doc = applyScheduleChanges(this.stored.doc, changes);
    this.stored = { doc, version: this.stored.version + 1 };
    const result = validate.flowSchedule(doc);
    expect(result.ok ? [] : result.issues).toEqual([]);
    if (before !== undefined) {
      // The cursor never goes backwards.
      expect(Date.parse(doc.lastSlotAt ?? '')).toBeGreaterThanOrEqual(Date.parse(before));
    }
    return true;
  }

  /** POST /runs: the same key gives the same run. */
  trigger(scheduleId: string, slotAt: string): string {
    const key = slotIdempotencyKey(scheduleId, slotAt);
    const existing = this.runsByKey.get(key);
    if (existing !== undefined) return existing;
    const runId = `20260301-000000_BTC-USDT_r${String(this.runsByKey.size).padStart(4, '0')}`;
    this.runsByKey.set(key, runId);
    return runId;
  }

  /** Trigger a claimed slot and record its run (re-read, re-decide the record on a conflict). */
  completeFire(slotAt: string): void {
    const runId = this.trigger(this.stored.doc.scheduleId, slotAt);
    for (;;) {
      const view = this.read();
      const record = firedRunChanges(view.doc, slotAt, runId);
      if (record === null || this.write(view, record)) return;
    }
  }
}

describe('decideTick (properties)', () => {
  it('two instances on stale reads: each slot claimed once, one run per slot, cursor monotonic', () => {
    fc.assert(
      fc.property(
        scheduleArb,
        fc.array(opArb, { minLength: 1, maxLength: 50 }),
        fc.integer({ min: -30_000, max: 30_000 }),
        (schedule, ops, skewMs) => {
          const world = new World(schedule);
          const views = [world.read(), world.read()];
          const skews = [0, skewMs];
          let clock = Date.parse(schedule.createdAt);
          for (const op of ops) {
            clock += op.advanceMs;
            const now = new Date(clock + (skews[op.instance] ?? 0));
            if (op.reread) views[op.instance] = world.read();
            const view = views[op.instance] ?? world.read();
            const decision = decideTick(view.doc, now, op.active);
            const cursor = Date.parse(view.doc.lastSlotAt ?? view.doc.createdAt);
            let wrote = false;
            if (decision.kind === 'complete_fire') {
              world.completeFire(decision.slotAt);
              wrote = true;
            }
            if (decision.kind === 'not_due' && decision.changes !== null) {
              world.write(view, decision.changes);
              wrote = true;
            }
            if (decision.kind === 'fire' || decision.kind === 'skip') {
              const slot = Date.parse(decision.slotAt);
              // A real slot of the expression, due, after the cursor the decision read.
              expect(nextSlotAfter(view.doc, new Date(slot - 1))?.getTime()).toBe(slot);
              expect(slot).toBeGreaterThan(cursor);
              expect(slot).toBeLessThanOrEqual(now.getTime());
              expect(Date.parse(decision.changes.nextSlotAt ?? '')).toBe(
                nextSlotAfter(view.doc, new Date(slot))?.getTime(),
              );
              expect(Date.parse(decision.changes.nextSlotAt ?? '')).toBeGreaterThan(now.getTime());
            }
            if (decision.kind === 'fire') {
              if (view.doc.catchUp === 'skip') {
                expect(now.getTime() - Date.parse(decision.slotAt)).toBeLessThanOrEqual(
                  DEFAULT_MISSED_GRACE_MS,
                );
              }
              if (view.doc.overlap === 'skip') expect(op.active).toBe(false);
              if (world.write(view, decision.changes)) {
                world.claimed.push(decision.slotAt);
                if (!op.crashAfterClaim) world.completeFire(decision.slotAt);
              }
              wrote = true;
            }
            if (decision.kind === 'skip') {
              world.write(view, decision.changes);
              wrote = true;
            }
            // After a write (won or lost) the instance reads again; otherwise its view may age.
            if (wrote) views[op.instance] = world.read();
          }
          // Each slot claimed at most once, and exactly the claimed slots have runs.
          expect(new Set(world.claimed).size).toBe(world.claimed.length);
          const triggered = [...world.runsByKey.keys()];
          expect(triggered.length).toBeLessThanOrEqual(world.claimed.length);
          for (const key of triggered) {
            expect(world.claimed.map((s) => slotIdempotencyKey(schedule.scheduleId, s))).toContain(
              key,
            );
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('one instance ticking at least every minute with overlap allow fires every slot, in order', () => {
    fc.assert(
      fc.property(
        scheduleArb,
        fc.array(fc.integer({ min: 0, max: MINUTE }), { minLength: 1, maxLength: 300 }),
        (schedule, gaps) => {
          let doc: FlowSchedule = { ...schedule, overlap: 'allow' };
          let clock = Date.parse(schedule.createdAt);
          const fired: string[] = [];
          for (const gap of gaps) {
            clock += gap;
            const decision = decideTick(doc, new Date(clock), false);
            expect(decision.kind === 'fire' || decision.kind === 'not_due').toBe(true);
            if (decision.kind === 'fire') {
              expect(decision.missed).toBe(0);
              fired.push(decision.slotAt);
              doc = applyScheduleChanges(doc, decision.changes);
              doc = applyScheduleChanges(doc, firedRunChanges(doc, decision.slotAt, 'x') ?? {});
            }
            if (decision.kind === 'not_due' && decision.changes !== null) {
              doc = applyScheduleChanges(doc, decision.changes);
            }
          }
          const expected = slotsBetween(
            doc,
            new Date(schedule.createdAt),
            new Date(clock),
            10_000,
          ).map((s) => s.toISOString());
          expect(fired).toEqual(expected);
        },
      ),
      { numRuns: 100 },
    );
  });

  it("'latest' after any gap: exactly one slot decided per tick with due slots, the newest", () => {
    fc.assert(
      fc.property(
        scheduleArb,
        fc.array(fc.integer({ min: 0, max: 12 * 60 * MINUTE }), { minLength: 1, maxLength: 6 }),
        (schedule, gaps) => {
          let doc: FlowSchedule = { ...schedule, catchUp: 'latest', overlap: 'allow' };
          let clock = Date.parse(schedule.createdAt);
          for (const gap of gaps) {
            clock += gap;
            const now = new Date(clock);
            const due = slotsBetween(doc, new Date(doc.lastSlotAt ?? doc.createdAt), now, 5_000);
            const decision = decideTick(doc, now, false);
            if (due.length === 0) {
              expect(decision.kind).toBe('not_due');
              continue;
            }
            expect(decision).toMatchObject({
              kind: 'fire',
              slotAt: due[due.length - 1]?.toISOString(),
              missed: Math.min(due.length - 1, 1000),
            });
            if (decision.kind !== 'fire') return;
            doc = applyScheduleChanges(doc, decision.changes);
            doc = applyScheduleChanges(doc, firedRunChanges(doc, decision.slotAt, 'x') ?? {});
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});
