import { validate, type FlowSchedule, type Signal, type ValidationIssue } from '@tda/contracts';
import { applyScheduleChanges, type ScheduleChanges } from '@tda/flow-engine';
import {
  InvalidScheduleError,
  InvalidSignalError,
  InvalidStoredDocumentError,
} from './schedule-store.errors';

/** What flow_schedule.schema.json cannot say: a paused schedule is out of the ticker's query. */
export function scheduleProblems(schedule: FlowSchedule): ValidationIssue[] {
  if (!schedule.enabled && schedule.nextSlotAt !== undefined) {
    return [
      {
        path: '/nextSlotAt',
        message: 'a disabled schedule has no nextSlotAt (the ticker would pick it up)',
        keyword: 'disabledSchedule',
      },
    ];
  }
  return [];
}

/** A JSON-only copy (undefined properties dropped): what Firestore stores and returns. */
function plainCopy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** The document to write, as plain JSON; InvalidScheduleError unless it may be written. */
export function assertWritableSchedule(input: FlowSchedule): FlowSchedule {
  const schedule = plainCopy(input);
  const result = validate.flowSchedule(schedule);
  const id = typeof schedule.scheduleId === 'string' ? schedule.scheduleId : undefined;
  if (!result.ok) throw new InvalidScheduleError(id, result.issues);
  const problems = scheduleProblems(result.value);
  if (problems.length > 0) throw new InvalidScheduleError(id, problems);
  return schedule;
}

/** The stored schedule with `changes` applied and updatedAt stamped, checked. */
export function changedSchedule(
  stored: FlowSchedule,
  changes: ScheduleChanges,
  now: Date,
): FlowSchedule {
  const next = applyScheduleChanges(stored, changes);
  next.updatedAt = now.toISOString();
  return assertWritableSchedule(next);
}

/** A stored schedule, read leniently; broken ones → InvalidStoredDocumentError. */
export function readScheduleDocument(scheduleId: string, data: unknown): FlowSchedule {
  const result = validate.flowSchedule(data);
  if (!result.ok) throw new InvalidStoredDocumentError('flow_schedules', scheduleId, result.issues);
  return result.value;
}

/** The signal to write, as plain JSON; InvalidSignalError unless `createOnce` may write it. */
export function assertWritableSignal(input: Signal): Signal {
  const signal = plainCopy(input);
  const result = validate.signal(signal);
  const id = typeof signal.signalId === 'string' ? signal.signalId : undefined;
  if (!result.ok) throw new InvalidSignalError(id, result.issues);
  if (signal.publishedAt !== undefined) {
    throw new InvalidSignalError(id, [
      { path: '/publishedAt', message: 'is set by markPublished only', keyword: 'publishedAt' },
    ]);
  }
  return signal;
}

/** A stored signal, read leniently; broken ones → InvalidStoredDocumentError. */
export function readSignalDocument(signalId: string, data: unknown): Signal {
  const result = validate.signal(data);
  if (!result.ok) throw new InvalidStoredDocumentError('signals', signalId, result.issues);
  return result.value;
}
