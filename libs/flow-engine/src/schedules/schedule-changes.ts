import type {
  CatchUpPolicy,
  FlowSchedule,
  OverlapPolicy,
  ScheduleFire,
  ScheduleScope,
} from '@tda/contracts';

/**
 * A change to a stored schedule (ScheduleStore.update): a value replaces the field as a whole,
 * null removes an optional field, an absent key leaves it. The id, owner and createdAt never
 * change; the store stamps updatedAt.
 */
export interface ScheduleChanges {
  flowKey?: string;
  scope?: ScheduleScope;
  cron?: string;
  timeZone?: string;
  enabled?: boolean;
  catchUp?: CatchUpPolicy;
  overlap?: OverlapPolicy;
  minSignalStrength?: number | null;
  description?: string | null;
  nextSlotAt?: string | null;
  lastSlotAt?: string | null;
  lastRunId?: string | null;
  lastFire?: ScheduleFire | null;
}

/** The keys a ScheduleChanges may carry, in document order (stores iterate them). */
export const SCHEDULE_CHANGE_KEYS = [
  'flowKey',
  'scope',
  'cron',
  'timeZone',
  'enabled',
  'catchUp',
  'overlap',
  'minSignalStrength',
  'description',
  'nextSlotAt',
  'lastSlotAt',
  'lastRunId',
  'lastFire',
] as const satisfies readonly (keyof ScheduleChanges)[];

/** True when the changes change nothing (every key absent). */
export function isEmptyScheduleChanges(changes: ScheduleChanges): boolean {
  return SCHEDULE_CHANGE_KEYS.every((key) => changes[key] === undefined);
}

/**
 * `schedule` with `changes` applied (a copy; updatedAt untouched: the store stamps it). Keys
 * outside SCHEDULE_CHANGE_KEYS are ignored, so a caller cannot move the id, owner or createdAt.
 */
export function applyScheduleChanges(
  schedule: FlowSchedule,
  changes: ScheduleChanges,
): FlowSchedule {
  const next: Record<string, unknown> = structuredClone(schedule);
  for (const key of SCHEDULE_CHANGE_KEYS) {
    const value = changes[key];
    if (value === undefined) continue;
    if (value === null) delete next[key];
    else next[key] = structuredClone(value);
  }
  return next as FlowSchedule;
}
