import type { FlowSchedule, ScheduleFire } from '@tda/contracts';
import { toTimestamp } from '../time';
import { latestSlotBetween, nextSlotAfter, slotsBetween, type CronSpec } from './cron';

/** A late tick still fires the current slot under catchUp 'skip' if it is at most this old. */
export const DEFAULT_MISSED_GRACE_MS = 120_000;
/** Missed slots are counted up to this many (a month of a per-minute schedule is not walked). */
export const MISSED_COUNT_LIMIT = 1000;

/** What decideTick reads of a schedule. */
export type TickSchedule = Pick<
  FlowSchedule,
  | 'cron'
  | 'timeZone'
  | 'enabled'
  | 'catchUp'
  | 'overlap'
  | 'createdAt'
  | 'lastSlotAt'
  | 'nextSlotAt'
  | 'lastFire'
>;

/**
 * Is the run of the previous fired slot (lastRunId) still PENDING or RUNNING? 'unknown' when the
 * caller could not tell (its read failed): overlap 'skip' then defers instead of guessing.
 */
export type ActiveRun = boolean | 'unknown';

export interface TickOptions {
  /** Default DEFAULT_MISSED_GRACE_MS. */
  missedGraceMs?: number;
}

/** The cursor write of a decided slot: conditional on the version the schedule was read at. */
export interface TickChanges {
  lastSlotAt: string;
  /** null: the expression has no slot left (removes the field). */
  nextSlotAt: string | null;
  lastFire: ScheduleFire;
}

export type TickDecision =
  /** A paused schedule never fires; nothing to write. */
  | { kind: 'disabled' }
  /** No slot due; `changes` repairs a stored nextSlotAt that is absent or stale, else null. */
  | { kind: 'not_due'; nextSlotAt: string | null; changes: { nextSlotAt: string | null } | null }
  /**
   * lastFire claimed `slotAt` but holds no runId: the claimer died (or is still) between the
   * cursor write and the trigger. Trigger it again with the same idempotency key (one run
   * either way) and record the run; no newer slot is decided before that.
   */
  | { kind: 'complete_fire'; slotAt: string }
  /** overlap 'skip' and the previous run's state unknown: decide on a later tick. */
  | { kind: 'deferred'; slotAt: string; reason: 'overlap_unknown' }
  /** Claim `slotAt` with `changes` (lastFire without runId), then trigger, then record the run. */
  | { kind: 'fire'; slotAt: string; missed: number; changes: TickChanges }
  | {
      kind: 'skip';
      slotAt: string;
      outcome: 'skipped_overlap' | 'skipped_missed';
      missed: number;
      changes: TickChanges;
    };

function specOf(schedule: TickSchedule): CronSpec {
  return { cron: schedule.cron, timeZone: schedule.timeZone };
}

function iso(date: Date | undefined): string | null {
  return date === undefined ? null : toTimestamp(date);
}

/** The instant every slot at or before which is decided: lastSlotAt, else createdAt. */
export function scheduleCursor(schedule: Pick<FlowSchedule, 'lastSlotAt' | 'createdAt'>): Date {
  return new Date(schedule.lastSlotAt ?? schedule.createdAt);
}

/** The changes of a decided slot: the cursor moves to it, nextSlotAt to the first slot after now. */
function decided(
  spec: CronSpec,
  slot: Date,
  now: Date,
  fire: { outcome: ScheduleFire['outcome']; missedCount: number; reason?: string },
): TickChanges {
  return {
    lastSlotAt: toTimestamp(slot),
    nextSlotAt: iso(nextSlotAfter(spec, now)),
    lastFire: { slotAt: toTimestamp(slot), at: toTimestamp(now), ...fire },
  };
}

/** Nothing due: the next slot after the cursor or now, and a repair of a stale nextSlotAt. */
function notDue(
  schedule: TickSchedule,
  spec: CronSpec,
  cursor: Date,
  now: Date,
): Extract<TickDecision, { kind: 'not_due' }> {
  const upcoming = iso(nextSlotAfter(spec, cursor.getTime() > now.getTime() ? cursor : now));
  const stored = schedule.nextSlotAt === undefined ? null : Date.parse(schedule.nextSlotAt);
  const stale = stored !== (upcoming === null ? null : Date.parse(upcoming));
  return {
    kind: 'not_due',
    nextSlotAt: upcoming,
    changes: stale ? { nextSlotAt: upcoming } : null,
  };
}

/**
 * One tick of one schedule, pure. Due slots are those in (lastSlotAt ?? createdAt, now]; only
 * the latest of them can fire, the older ones are skipped (counted in `missed`):
 * - catchUp 'skip': the latest fires only if at most `missedGraceMs` old, else it is skipped
 *   too (skipped_missed); catchUp 'latest': the latest fires whatever its age.
 * - overlap 'skip' with the previous run active: skipped_overlap; state unknown: deferred.
 * Then the cursor moves to the latest due slot (never backwards: a stale read with an older `now`
 * finds nothing due) and nextSlotAt to the first slot after now. At most one slot is fired per
 * decision, and a slot at or before the cursor is never due again: with the conditional write
 * of `changes`, each slot is decided once however many instances tick.
 */
export function decideTick(
  schedule: TickSchedule,
  now: Date,
  activeRun: ActiveRun,
  options: TickOptions = {},
): TickDecision {
  if (!schedule.enabled) return { kind: 'disabled' };
  const { lastFire } = schedule;
  if (lastFire?.outcome === 'fired' && lastFire.runId === undefined) {
    return { kind: 'complete_fire', slotAt: lastFire.slotAt };
  }
  const spec = specOf(schedule);
  const cursor = scheduleCursor(schedule);
  const latest = latestSlotBetween(spec, cursor, now);
  if (latest === undefined) return notDue(schedule, spec, cursor, now);
  const missed = slotsBetween(
    spec,
    cursor,
    new Date(latest.getTime() - 1),
    MISSED_COUNT_LIMIT,
  ).length;
  const ageMs = now.getTime() - latest.getTime();
  const graceMs = options.missedGraceMs ?? DEFAULT_MISSED_GRACE_MS;
  const slotAt = toTimestamp(latest);
  if (schedule.catchUp === 'skip' && ageMs > graceMs) {
    const reason = `due ${Math.round(ageMs / 1000)} s ago (grace ${Math.round(graceMs / 1000)} s)`;
    const changes = decided(spec, latest, now, {
      outcome: 'skipped_missed',
      missedCount: missed,
      reason,
    });
    return { kind: 'skip', slotAt, outcome: 'skipped_missed', missed, changes };
  }
  if (schedule.overlap === 'skip' && activeRun === 'unknown') {
    return { kind: 'deferred', slotAt, reason: 'overlap_unknown' };
  }
  if (schedule.overlap === 'skip' && activeRun === true) {
    const changes = decided(spec, latest, now, {
      outcome: 'skipped_overlap',
      missedCount: missed,
      reason: 'the previous run is still active',
    });
    return { kind: 'skip', slotAt, outcome: 'skipped_overlap', missed, changes };
  }
  const changes = decided(spec, latest, now, { outcome: 'fired', missedCount: missed });
  return { kind: 'fire', slotAt, missed, changes };
}
