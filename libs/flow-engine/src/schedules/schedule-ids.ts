import { createHash } from 'node:crypto';
import { InvalidRequestError } from '../errors';
import type { RandomSource } from '../ids';
import { toTimestamp } from '../time';

/** contracts/flow_schedule.schema.json ScheduleId (schedule-ids.spec.ts checks they agree). */
export const SCHEDULE_ID_PATTERN = /^sch_[a-z0-9]{20}$/;
/** contracts/signal.schema.json SignalId. */
export const SIGNAL_ID_PATTERN = /^sig_[0-9a-f]{24}$/;

const SCHEDULE_ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const SCHEDULE_ID_RANDOM_LENGTH = 20;
const SLOT_KEY_PREFIX = 'schedule';

/** `sch_` + 20 random [a-z0-9] (~103 bits): the id of a new flow_schedules document. */
export function generateScheduleId(random: RandomSource): string {
  let id = 'sch_';
  for (let i = 0; i < SCHEDULE_ID_RANDOM_LENGTH; i += 1) {
    const index = Math.min(
      SCHEDULE_ID_ALPHABET.length - 1,
      Math.max(0, Math.floor(random() * SCHEDULE_ID_ALPHABET.length)),
    );
    id += SCHEDULE_ID_ALPHABET.charAt(index);
  }
  return id;
}

/** A slot as an exact instant (`…00Z` and `…00.000Z` are one slot); throws on garbage. */
function slotDate(slotAt: string | Date): Date {
  const date = typeof slotAt === 'string' ? new Date(slotAt) : slotAt;
  toTimestamp(date); // rejects invalid dates
  return date;
}

/** YYYYMMDDTHHmmssZ: storage- and idempotency-key-safe (no '.', no ':'). */
function compactSlot(date: Date): string {
  return date
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/[-:]/g, '');
}

/**
 * The idempotency key of the run of a slot: `schedule:<scheduleId>:<YYYYMMDDTHHmmssZ>` (50
 * characters; trigger_request's idempotencyKey alphabet). Firing the same slot twice — two
 * ticker instances, a retried Cloud Scheduler call, a restart, fire-now in the slot's minute —
 * asks POST /runs twice with the same key and gets one run.
 */
export function slotIdempotencyKey(scheduleId: string, slotAt: string | Date): string {
  if (!SCHEDULE_ID_PATTERN.test(scheduleId)) {
    throw new InvalidRequestError(`invalid scheduleId '${scheduleId.slice(0, 40)}'`, {
      field: 'scheduleId',
    });
  }
  return `${SLOT_KEY_PREFIX}:${scheduleId}:${compactSlot(slotDate(slotAt))}`;
}

/** The (scheduleId, slotAt) a slot idempotency key names, or undefined for any other key. */
export function parseSlotIdempotencyKey(
  key: string | undefined,
): { scheduleId: string; slotAt: string } | undefined {
  const match = /^schedule:(sch_[a-z0-9]{20}):(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(
    key ?? '',
  );
  if (match === null) return undefined;
  const [, scheduleId = '', y, mo, d, h, mi, s] = match;
  const date = new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}.000Z`);
  if (Number.isNaN(date.getTime()) || compactSlot(date) !== `${y}${mo}${d}T${h}${mi}${s}Z`) {
    return undefined;
  }
  return { scheduleId, slotAt: date.toISOString() };
}

/**
 * signals/{signalId} of a slot: `sig_` + 24 hex of sha256("signal", scheduleId, slot instant).
 * One signal per (schedule, slot) whichever instance, replay or redelivery computes it.
 */
export function signalIdFor(scheduleId: string, slotAt: string | Date): string {
  const digest = createHash('sha256')
    .update(`signal\n${scheduleId}\n${slotDate(slotAt).toISOString()}`)
    .digest('hex');
  return `sig_${digest.slice(0, 24)}`;
}

/**
 * The slot of a fire-now: `now` truncated to the minute. Two fire-now calls in the same minute
 * are one run (same idempotency key), and a fire-now in the minute of a scheduled slot is that
 * slot's run. Its asOf is that minute.
 */
export function fireNowSlot(now: Date): string {
  const ms = now.getTime();
  return toTimestamp(new Date(ms - (((ms % 60_000) + 60_000) % 60_000)));
}
