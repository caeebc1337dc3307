import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FlowSchedule } from '@tda/contracts';
import { SCHEDULE_ID_PATTERN, type ScheduleChanges } from '@tda/flow-engine';
import {
  assertDueLimit,
  compareKeysetDesc,
  keysetPage,
  validateKeysetQuery,
} from './keyset-cursor';
import {
  assertWritableSchedule,
  changedSchedule,
  readScheduleDocument,
} from './schedule-documents';
import {
  ScheduleAlreadyExistsError,
  ScheduleNotFoundError,
  ScheduleVersionConflictError,
} from './schedule-store.errors';
import {
  type ScheduleListPage,
  type ScheduleListQuery,
  type ScheduleStore,
  type VersionedSchedule,
} from './schedule-store.port';

export interface InMemoryScheduleStoreOptions {
  /** Source of the updatedAt stamps of `update`. */
  clock?: () => Date;
}

interface Entry {
  /** Raw stored document: normally a FlowSchedule, but seedRawDocument may store anything. */
  doc: Record<string, unknown>;
  version: string;
}

/**
 * ScheduleStore in process memory (TDA_BACKEND=memory and unit tests) with the Firestore
 * adapter's semantics: create-only creates, conditional updates and deletes on an opaque version
 * (a counter), lenient reads, the same list orders and cursors. Documents are deep-copied in and
 * out, and every method yields to the event loop first, so concurrent callers interleave.
 */
export class InMemoryScheduleStore implements ScheduleStore {
  private readonly docs = new Map<string, Entry>();
  private readonly clock: () => Date;
  private sequence = 0;

  constructor(options: InMemoryScheduleStoreOptions = {}) {
    this.clock = options.clock ?? (() => new Date());
  }

  async create(schedule: FlowSchedule): Promise<VersionedSchedule> {
    const doc = assertWritableSchedule(schedule);
    await nextTurn();
    if (this.docs.has(doc.scheduleId)) throw new ScheduleAlreadyExistsError(doc.scheduleId);
    const version = this.nextVersion();
    this.docs.set(doc.scheduleId, { doc: structuredClone(doc), version });
    return { schedule: doc, version };
  }

  async get(scheduleId: string): Promise<VersionedSchedule | null> {
    await nextTurn();
    const entry = SCHEDULE_ID_PATTERN.test(scheduleId) ? this.docs.get(scheduleId) : undefined;
    return entry === undefined ? null : this.versioned(scheduleId, entry);
  }

  async update(
    scheduleId: string,
    changes: ScheduleChanges,
    expectedVersion: string,
  ): Promise<VersionedSchedule> {
    await nextTurn();
    const entry = this.current(scheduleId, expectedVersion);
    const stored = readScheduleDocument(scheduleId, structuredClone(entry.doc));
    const next = changedSchedule(stored, changes, this.clock());
    const version = this.nextVersion();
    this.docs.set(scheduleId, { doc: structuredClone(next), version });
    return { schedule: next, version };
  }

  async delete(scheduleId: string, expectedVersion: string): Promise<void> {
    await nextTurn();
    this.current(scheduleId, expectedVersion);
    this.docs.delete(scheduleId);
  }

  async listByOwner(query: ScheduleListQuery): Promise<ScheduleListPage> {
    const { ownerId, limit, after } = validateKeysetQuery(query, SCHEDULE_ID_PATTERN);
    await nextTurn();
    const rows = [...this.docs.entries()]
      .filter(([, entry]) => entry.doc['ownerId'] === ownerId)
      .map(([id, entry]) => readScheduleDocument(id, structuredClone(entry.doc)))
      .map((schedule) => ({ schedule, position: positionOf(schedule) }))
      .filter((row) => after === null || compareKeysetDesc(row.position, after) > 0)
      .sort((a, b) => compareKeysetDesc(a.position, b.position))
      .slice(0, limit + 1)
      .map((row) => row.schedule);
    const page = keysetPage(rows, limit, positionOf);
    return { schedules: page.items, nextCursor: page.nextCursor };
  }

  async listDue(now: Date, limit: number): Promise<VersionedSchedule[]> {
    assertDueLimit(limit);
    await nextTurn();
    const at = now.toISOString();
    return [...this.docs.entries()]
      .filter(([, { doc }]) => {
        const next = doc['nextSlotAt'];
        return doc['enabled'] === true && typeof next === 'string' && next <= at;
      })
      .map(([id, entry]) => this.versioned(id, entry))
      .sort((a, b) => compareDue(a.schedule, b.schedule))
      .slice(0, limit);
  }

  /** Test hook: stores a document as a foreign or older writer could have left it. */
  seedRawDocument(scheduleId: string, doc: Record<string, unknown>): void {
    this.docs.set(scheduleId, { doc: structuredClone(doc), version: this.nextVersion() });
  }

  private versioned(scheduleId: string, entry: Entry): VersionedSchedule {
    return {
      schedule: readScheduleDocument(scheduleId, structuredClone(entry.doc)),
      version: entry.version,
    };
  }

  private current(scheduleId: string, expectedVersion: string): Entry {
    const entry = SCHEDULE_ID_PATTERN.test(scheduleId) ? this.docs.get(scheduleId) : undefined;
    if (entry === undefined) throw new ScheduleNotFoundError(scheduleId);
    if (entry.version !== expectedVersion) {
      throw new ScheduleVersionConflictError(scheduleId, expectedVersion);
    }
    return entry;
  }

  private nextVersion(): string {
    this.sequence += 1;
    return String(this.sequence);
  }
}

function positionOf(schedule: FlowSchedule): { createdAt: string; id: string } {
  return { createdAt: schedule.createdAt, id: schedule.scheduleId };
}

/** listDue's order: nextSlotAt asc, then scheduleId asc (Firestore: nextSlotAt, __name__). */
function compareDue(a: FlowSchedule, b: FlowSchedule): number {
  const x = a.nextSlotAt ?? '';
  const y = b.nextSlotAt ?? '';
  if (x !== y) return x < y ? -1 : 1;
  if (a.scheduleId !== b.scheduleId) return a.scheduleId < b.scheduleId ? -1 : 1;
  return 0;
}
