import type { FlowSchedule } from '@tda/contracts';
import type { ScheduleChanges } from '@tda/flow-engine';

/** flow_schedules/{scheduleId} (DESIGN.md §2, flow 7). */
export const DEFAULT_SCHEDULES_COLLECTION = 'flow_schedules';
/** Page size bound of every list of the schedule and signal stores (and of listDue). */
export const SCHEDULE_LIST_LIMIT_MAX = 100;

/**
 * A schedule with the version it was read at. The version is opaque: callers hand it back to
 * `update` / `delete` as the optimistic precondition (Firestore: the document update time to the
 * nanosecond; in memory: a counter).
 */
export interface VersionedSchedule {
  schedule: FlowSchedule;
  version: string;
}

export interface ScheduleListQuery {
  /** Only this owner's schedules: the filter is part of the query, never applied afterwards. */
  ownerId: string;
  /** 1..SCHEDULE_LIST_LIMIT_MAX. */
  limit: number;
  /** `nextCursor` of the previous page; omit for the first page. */
  cursor?: string;
}

export interface ScheduleListPage {
  /** createdAt desc, then scheduleId desc. */
  schedules: FlowSchedule[];
  /** null on the last page. */
  nextCursor: string | null;
}

/**
 * Persistence of flow schedules. Every adapter has the same semantics, proven by the conformance
 * suite in `@tda/flow-store/testing`:
 *
 * - `create` is create-only (ScheduleAlreadyExistsError) and writes the document as given
 *   (flow-engine newSchedule stamps createdAt/updatedAt and the first nextSlotAt). It is checked
 *   first (flow_schedule.schema.json, and a disabled schedule has no nextSlotAt) →
 *   InvalidScheduleError, nothing written.
 * - `get` reads leniently (unknown extra fields tolerated); a stored document that breaks the
 *   schema → InvalidStoredDocumentError. A string that is not a ScheduleId is "not found".
 * - `update` applies ScheduleChanges (flow-engine: a value replaces the field, null removes it)
 *   only if the document is still at `expectedVersion` (ScheduleVersionConflictError otherwise,
 *   nothing written), stamps updatedAt from the store's clock and checks the result
 *   (InvalidScheduleError); a missing schedule → ScheduleNotFoundError. `delete` is conditional
 *   the same way.
 * - `listByOwner`: one owner's schedules, createdAt desc then scheduleId desc, keyset pages with
 *   an opaque cursor (InvalidScheduleListQueryError for a bad limit or a foreign cursor).
 * - `listDue(now, limit)`: the ticker's query: enabled schedules with nextSlotAt <= now, oldest
 *   nextSlotAt first (then scheduleId), with their versions for the conditional cursor write.
 * - No transactions: callers read → decide (flow-engine decideTick) → write conditionally.
 */
export interface ScheduleStore {
  create(schedule: FlowSchedule): Promise<VersionedSchedule>;
  get(scheduleId: string): Promise<VersionedSchedule | null>;
  update(
    scheduleId: string,
    changes: ScheduleChanges,
    expectedVersion: string,
  ): Promise<VersionedSchedule>;
  delete(scheduleId: string, expectedVersion: string): Promise<void>;
  listByOwner(query: ScheduleListQuery): Promise<ScheduleListPage>;
  listDue(now: Date, limit: number): Promise<VersionedSchedule[]>;
}

/**
 * The schedule if it exists and belongs to `ownerId`, else undefined: another owner's schedule is
 * indistinguishable from a missing one (the API answers 404 for both).
 */
export async function findOwnedSchedule(
  store: Pick<ScheduleStore, 'get'>,
  ownerId: string,
  scheduleId: string,
): Promise<VersionedSchedule | undefined> {
  const found = await store.get(scheduleId);
  return found !== null && found.schedule.ownerId === ownerId ? found : undefined;
}
