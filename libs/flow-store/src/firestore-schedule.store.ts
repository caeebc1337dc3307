import {
  type CollectionReference,
  type DocumentReference,
  FieldPath,
  FieldValue,
  type Firestore,
  GrpcStatus,
  type Timestamp,
} from '@google-cloud/firestore';
import type { FlowSchedule } from '@tda/contracts';
import { SCHEDULE_CHANGE_KEYS, SCHEDULE_ID_PATTERN, type ScheduleChanges } from '@tda/flow-engine';
import { firestoreGrpcCode, guardFirestoreCall } from './firestore-status';
import { firestoreTimestampOf, firestoreVersionOf } from './firestore-version';
import { assertDueLimit, keysetPage, validateKeysetQuery } from './keyset-cursor';
import {
  assertWritableSchedule,
  changedSchedule,
  readScheduleDocument,
} from './schedule-documents';
import {
  ScheduleAlreadyExistsError,
  ScheduleNotFoundError,
  ScheduleStoreUnavailableError,
  ScheduleVersionConflictError,
} from './schedule-store.errors';
import {
  DEFAULT_SCHEDULES_COLLECTION,
  type ScheduleListPage,
  type ScheduleListQuery,
  type ScheduleStore,
  type VersionedSchedule,
} from './schedule-store.port';

export interface FirestoreScheduleStoreOptions {
  /** Collection of the schedule documents (default `flow_schedules`); tests use a unique one each. */
  collection?: string;
  /** Source of the updatedAt stamps of `update`. */
  clock?: () => Date;
}

/**
 * ScheduleStore on Firestore: `flow_schedules/{scheduleId}`. Conditional writes use the
 * update-time precondition (`lastUpdateTime`), never transactions (seed 002). Queries and their
 * composite indexes (deploy/firestore/firestore.indexes.json, checked by
 * schedule-index-coverage.spec.ts): listByOwner = ownerId ==, createdAt desc, __name__ desc;
 * listDue = enabled ==, nextSlotAt <=, nextSlotAt asc, __name__ asc.
 */
export class FirestoreScheduleStore implements ScheduleStore {
  private readonly collection: CollectionReference;
  private readonly clock: () => Date;

  constructor(firestore: Firestore, options: FirestoreScheduleStoreOptions = {}) {
    this.collection = firestore.collection(options.collection ?? DEFAULT_SCHEDULES_COLLECTION);
    this.clock = options.clock ?? (() => new Date());
  }

  create(schedule: FlowSchedule): Promise<VersionedSchedule> {
    return this.guarded('create', async () => {
      const doc = assertWritableSchedule(schedule);
      try {
        const result = await this.ref(doc.scheduleId).create(doc);
        return { schedule: doc, version: firestoreVersionOf(result.writeTime) };
      } catch (error) {
        if (firestoreGrpcCode(error) === GrpcStatus.ALREADY_EXISTS) {
          throw new ScheduleAlreadyExistsError(doc.scheduleId);
        }
        throw error;
      }
    });
  }

  get(scheduleId: string): Promise<VersionedSchedule | null> {
    return this.guarded('get', () => this.read(scheduleId));
  }

  update(
    scheduleId: string,
    changes: ScheduleChanges,
    expectedVersion: string,
  ): Promise<VersionedSchedule> {
    return this.guarded('update', async () => {
      const current = await this.read(scheduleId);
      if (current === null) throw new ScheduleNotFoundError(scheduleId);
      const lastUpdateTime = firestoreTimestampOf(expectedVersion);
      if (current.version !== expectedVersion || lastUpdateTime === null) {
        throw new ScheduleVersionConflictError(scheduleId, expectedVersion);
      }
      const next = changedSchedule(current.schedule, changes, this.clock());
      const fields: Record<string, unknown> = { updatedAt: next.updatedAt };
      for (const key of SCHEDULE_CHANGE_KEYS) {
        if (changes[key] === undefined) continue;
        fields[key] = next[key] === undefined ? FieldValue.delete() : next[key];
      }
      const writeTime = await this.conditional(scheduleId, expectedVersion, (ref) =>
        ref.update(fields, { lastUpdateTime }),
      );
      return { schedule: next, version: firestoreVersionOf(writeTime) };
    });
  }

  delete(scheduleId: string, expectedVersion: string): Promise<void> {
    return this.guarded('delete', async () => {
      if (!SCHEDULE_ID_PATTERN.test(scheduleId)) throw new ScheduleNotFoundError(scheduleId);
      const lastUpdateTime = firestoreTimestampOf(expectedVersion);
      if (lastUpdateTime === null) throw await this.explainRejection(scheduleId, expectedVersion);
      await this.conditional(scheduleId, expectedVersion, (ref) => ref.delete({ lastUpdateTime }));
    });
  }

  listByOwner(query: ScheduleListQuery): Promise<ScheduleListPage> {
    return this.guarded('listByOwner', async () => {
      const { ownerId, limit, after } = validateKeysetQuery(query, SCHEDULE_ID_PATTERN);
      let q = this.collection
        .where('ownerId', '==', ownerId)
        .orderBy('createdAt', 'desc')
        .orderBy(FieldPath.documentId(), 'desc');
      if (after !== null) q = q.startAfter(after.createdAt, after.id);
      const snapshot = await q.limit(limit + 1).get();
      const rows = snapshot.docs.map((doc) => readScheduleDocument(doc.id, doc.data()));
      const page = keysetPage(rows, limit, (s) => ({ createdAt: s.createdAt, id: s.scheduleId }));
      return { schedules: page.items, nextCursor: page.nextCursor };
    });
  }

  listDue(now: Date, limit: number): Promise<VersionedSchedule[]> {
    return this.guarded('listDue', async () => {
      assertDueLimit(limit);
      const snapshot = await this.collection
        .where('enabled', '==', true)
        .where('nextSlotAt', '<=', now.toISOString())
        .orderBy('nextSlotAt', 'asc')
        .orderBy(FieldPath.documentId(), 'asc')
        .limit(limit)
        .get();
      return snapshot.docs.map((doc) => ({
        schedule: readScheduleDocument(doc.id, doc.data()),
        version: firestoreVersionOf(doc.updateTime),
      }));
    });
  }

  /** The document and its version, unguarded (callers guard under their own operation name). */
  private async read(scheduleId: string): Promise<VersionedSchedule | null> {
    if (!SCHEDULE_ID_PATTERN.test(scheduleId)) return null;
    const snapshot = await this.ref(scheduleId).get();
    const data = snapshot.data();
    const updateTime = snapshot.updateTime;
    if (!snapshot.exists || data === undefined || updateTime === undefined) return null;
    return {
      schedule: readScheduleDocument(scheduleId, data),
      version: firestoreVersionOf(updateTime),
    };
  }

  /** A write under the update-time precondition; a failed precondition is told apart from a missing document. */
  private async conditional(
    scheduleId: string,
    expectedVersion: string,
    write: (ref: DocumentReference) => Promise<{ writeTime: Timestamp }>,
  ): Promise<Timestamp> {
    try {
      return (await write(this.ref(scheduleId))).writeTime;
    } catch (error) {
      const code = firestoreGrpcCode(error);
      if (code === GrpcStatus.NOT_FOUND) throw new ScheduleNotFoundError(scheduleId);
      if (code === GrpcStatus.FAILED_PRECONDITION || code === GrpcStatus.ABORTED) {
        throw await this.explainRejection(scheduleId, expectedVersion);
      }
      throw error;
    }
  }

  private async explainRejection(scheduleId: string, expectedVersion: string): Promise<Error> {
    const snapshot = await this.ref(scheduleId).get();
    return snapshot.exists
      ? new ScheduleVersionConflictError(scheduleId, expectedVersion)
      : new ScheduleNotFoundError(scheduleId);
  }

  /** Every call, with Firestore's transient failures as a retryable ScheduleStoreUnavailableError. */
  private guarded<T>(operation: string, call: () => Promise<T>): Promise<T> {
    return guardFirestoreCall(
      call,
      (status, cause) => new ScheduleStoreUnavailableError(operation, status, cause),
    );
  }

  private ref(scheduleId: string): DocumentReference {
    return this.collection.doc(scheduleId);
  }
}
