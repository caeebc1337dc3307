import { type Firestore, GrpcStatus } from '@google-cloud/firestore';
import { rejectionOf } from '@tda/test-support';
import { describe, expect, it } from 'vitest';
import { FirestoreScheduleStore } from './firestore-schedule.store';
import { FirestoreSignalStore } from './firestore-signal.store';
import { ScheduleStoreError } from './schedule-store.errors';
import { grpcError, makeSignal, makeStoredSchedule } from './testing';

/** A Firestore whose every document and query call fails with `error`. */
function failing(error: () => Error): Firestore {
  const fail = (): Promise<never> => Promise.reject(error());
  const query: Record<string, unknown> = { get: fail };
  for (const method of ['where', 'orderBy', 'startAfter', 'limit']) query[method] = () => query;
  const doc = { get: fail, create: fail, update: fail, delete: fail };
  return { collection: () => ({ ...query, doc: () => doc }) } as unknown as Firestore;
}

/** Every operation of both stores once. */
function operations(firestore: Firestore): Array<[string, () => Promise<unknown>]> {
  const schedules = new FirestoreScheduleStore(firestore);
  const signals = new FirestoreSignalStore(firestore);
  const schedule = makeStoredSchedule(1);
  const signal = makeSignal();
  const version = '1700000000.000000000';
  return [
    ['create', () => schedules.create(schedule)],
    ['get', () => schedules.get(schedule.scheduleId)],
    ['update', () => schedules.update(schedule.scheduleId, { description: 'x' }, version)],
    ['delete', () => schedules.delete(schedule.scheduleId, version)],
    ['listByOwner', () => schedules.listByOwner({ ownerId: 'alice', limit: 5 })],
    ['listDue', () => schedules.listDue(new Date(), 5)],
    ['createOnce', () => signals.createOnce(signal)],
    ['markPublished', () => signals.markPublished(signal.signalId, new Date())],
    ['get', () => signals.get(signal.signalId)],
    ['list', () => signals.list({ ownerId: 'alice', limit: 5 })],
  ];
}

describe('Firestore schedule and signal stores: Firestore failures', () => {
  for (const name of [
    'UNAVAILABLE',
    'DEADLINE_EXCEEDED',
    'RESOURCE_EXHAUSTED',
    'ABORTED',
  ] as const) {
    it(`${name} from any operation is a retryable UPSTREAM_UNAVAILABLE ScheduleStoreError`, async () => {
      const cause = () => grpcError(GrpcStatus[name], `${name}: the backend said no`);
      for (const [operation, call] of operations(failing(cause))) {
        const error = await rejectionOf(call());
        expect(error, operation).toBeInstanceOf(ScheduleStoreError);
        expect(error).toMatchObject({
          code: 'UPSTREAM_UNAVAILABLE',
          retryable: true,
          details: { operation, grpcStatus: name },
        });
        expect((error as Error).message).not.toContain('the backend said no');
      }
    });
  }

  it('other failures (permissions) are rethrown unchanged', async () => {
    const denied = grpcError(GrpcStatus.PERMISSION_DENIED, 'denied');
    for (const [operation, call] of operations(failing(() => denied))) {
      expect(await rejectionOf(call()), operation).toBe(denied);
    }
  });
});
