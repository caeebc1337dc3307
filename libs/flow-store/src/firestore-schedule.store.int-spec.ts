import type { Firestore } from '@google-cloud/firestore';
import { emulatorEndpoints, uniqueName } from '@tda/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFirestore } from './firestore-client.factory';
import { FirestoreScheduleStore } from './firestore-schedule.store';
import { FirestoreSignalStore } from './firestore-signal.store';
import {
  describeScheduleStoreConformance,
  describeSignalStoreConformance,
  makeStoredSchedule,
} from './testing';

let firestore: Firestore;

beforeAll(() => {
  const { firestoreHost, projectId } = emulatorEndpoints();
  firestore = createFirestore({ projectId, emulatorHost: firestoreHost });
});

afterAll(async () => {
  await firestore.terminate();
});

describeScheduleStoreConformance('firestore (emulator)', async ({ clock }) => {
  // A collection per test: parallel files and earlier tests never show up in a list.
  const collection = uniqueName('flow_schedules');
  return {
    store: new FirestoreScheduleStore(firestore, { collection, clock }),
    cleanup: () => firestore.recursiveDelete(firestore.collection(collection)),
    seedRawDocument: async (id, doc) => {
      await firestore.collection(collection).doc(id).set(doc);
    },
  };
});

describeSignalStoreConformance('firestore (emulator)', async () => {
  const collection = uniqueName('signals');
  return {
    store: new FirestoreSignalStore(firestore, { collection }),
    cleanup: () => firestore.recursiveDelete(firestore.collection(collection)),
    seedRawDocument: async (id, doc) => {
      await firestore.collection(collection).doc(id).set(doc);
    },
  };
});

describe('FirestoreScheduleStore', () => {
  it('stores flow_schedules/{scheduleId} with the update time as the version; null deletes', async () => {
    const collection = uniqueName('flow_schedules');
    try {
      const store = new FirestoreScheduleStore(firestore, { collection });
      const created = await store.create(makeStoredSchedule(1, { minSignalStrength: 0.5 }));
      const ref = firestore.collection(collection).doc(created.schedule.scheduleId);
      const snapshot = await ref.get();
      const updateTime = snapshot.updateTime;
      if (updateTime === undefined) throw new Error('no update time');
      expect(created.version).toBe(
        `${updateTime.seconds}.${String(updateTime.nanoseconds).padStart(9, '0')}`,
      );
      expect(snapshot.data()).toEqual(created.schedule);
      const updated = await store.update(
        created.schedule.scheduleId,
        { minSignalStrength: null },
        created.version,
      );
      expect((await ref.get()).data()).toEqual(updated.schedule);
      expect((await ref.get()).data()).not.toHaveProperty('minSignalStrength');
    } finally {
      await firestore.recursiveDelete(firestore.collection(collection));
    }
  });
});
