import type { FlowSchedule, FlowScheduleRequest } from '@tda/contracts';
import { toTimestamp } from '../time';
import { nextSlotAfter, parseSchedule } from './cron';
import type { ScheduleChanges } from './schedule-changes';
import { scheduleCursor } from './tick';

/** Version of the flow_schedules document format (flow_schedule.schema.json schemaVersion). */
export const FLOW_SCHEDULE_SCHEMA_VERSION = 1;
/** Signal documents' format version (signal.schema.json schemaVersion). */
export const SIGNAL_SCHEMA_VERSION = 1;

export type NewScheduleResult =
  { ok: true; schedule: FlowSchedule } | { ok: false; field: 'cron' | 'timeZone'; message: string };

/**
 * The document POST /schedules creates from a request that passed validate.flowScheduleRequest:
 * defaults applied (timeZone UTC, enabled, catchUp skip, overlap skip), cron and time zone
 * normalized, nextSlotAt = the first slot after `now` when enabled. An invalid cron expression
 * or unknown time zone is `ok: false` (a 4xx naming the field).
 */
export function newSchedule(
  request: FlowScheduleRequest,
  identity: { scheduleId: string; ownerId: string; now: Date },
): NewScheduleResult {
  const parsed = parseSchedule(request.cron, request.timeZone ?? 'UTC');
  if (!parsed.ok) return parsed;
  const at = toTimestamp(identity.now);
  const enabled = request.enabled ?? true;
  const next = enabled ? nextSlotAfter(parsed.spec, identity.now) : undefined;
  const schedule: FlowSchedule = {
    schemaVersion: FLOW_SCHEDULE_SCHEMA_VERSION,
    scheduleId: identity.scheduleId,
    ownerId: identity.ownerId,
    flowKey: request.flowKey,
    scope: structuredClone(request.scope),
    cron: parsed.spec.cron,
    timeZone: parsed.spec.timeZone,
    enabled,
    catchUp: request.catchUp ?? 'skip',
    overlap: request.overlap ?? 'skip',
    ...(request.minSignalStrength === undefined
      ? {}
      : { minSignalStrength: request.minSignalStrength }),
    ...(request.description === undefined ? {} : { description: request.description }),
    createdAt: at,
    updatedAt: at,
    ...(next === undefined ? {} : { nextSlotAt: toTimestamp(next) }),
  };
  return { ok: true, schedule };
}

/** Pause: never fires, out of the ticker's query. null when already paused (nothing to write). */
export function pauseChanges(schedule: Pick<FlowSchedule, 'enabled'>): ScheduleChanges | null {
  return schedule.enabled ? { enabled: false, nextSlotAt: null } : null;
}

/**
 * Resume: the cursor moves to `now` (never backwards), so the slots of the pause are not caught
 * up; the first slot after it is next. null when already enabled.
 */
export function resumeChanges(
  schedule: Pick<FlowSchedule, 'enabled' | 'cron' | 'timeZone' | 'lastSlotAt' | 'createdAt'>,
  now: Date,
): ScheduleChanges | null {
  if (schedule.enabled) return null;
  const cursor = scheduleCursor(schedule);
  const from = cursor.getTime() > now.getTime() ? cursor : now;
  const next = nextSlotAfter(schedule, from);
  return {
    enabled: true,
    lastSlotAt: toTimestamp(from),
    nextSlotAt: next === undefined ? null : toTimestamp(next),
  };
}

/**
 * After the trigger of a claimed slot returned its run: lastFire gets the runId, lastRunId
 * follows. null when there is nothing to record (lastFire is another slot, not fired, or already
 * has this run): a re-read after a conflict turns a repeated record into a no-op.
 */
export function firedRunChanges(
  schedule: Pick<FlowSchedule, 'lastFire'>,
  slotAt: string,
  runId: string,
): ScheduleChanges | null {
  const fire = schedule.lastFire;
  if (fire === undefined || fire.outcome !== 'fired') return null;
  if (Date.parse(fire.slotAt) !== Date.parse(slotAt) || fire.runId === runId) return null;
  return { lastFire: { ...fire, runId }, lastRunId: runId };
}

/**
 * The trigger of a claimed slot was refused for good (unknown flowKey, invalid scope, ...):
 * lastFire becomes 'failed' with a sanitized reason, so the next tick moves on. null when
 * lastFire is not that slot's pending fire.
 */
export function failedFireChanges(
  schedule: Pick<FlowSchedule, 'lastFire'>,
  slotAt: string,
  reason: string,
): ScheduleChanges | null {
  const fire = schedule.lastFire;
  if (fire === undefined || fire.outcome !== 'fired' || fire.runId !== undefined) return null;
  if (Date.parse(fire.slotAt) !== Date.parse(slotAt)) return null;
  return { lastFire: { ...fire, outcome: 'failed', reason: reason.slice(0, 200) } };
}
