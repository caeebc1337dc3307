import type { Firestore } from '@google-cloud/firestore';
import { createFirestore } from '@tda/flow-store';
import { emulatorEndpoints, uniqueName } from '@tda/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FirestoreAccountStore } from './firestore-account.store';
import { describeAccountStoreConformance, makeNewAccount } from './testing';

let firestore: Firestore;

beforeAll(() => {
  const { firestoreHost, projectId } = emulatorEndpoints();
  firestore = createFirestore({ projectId, emulatorHost: firestoreHost });
});

afterAll(async () => {
  await firestore.terminate();
});

describeAccountStoreConformance('firestore (emulator)', async ({ clock }) => {
  // A collection per test: parallel files and earlier tests never show up in a list.
  const collection = uniqueName('accounts');
  return {
    store: new FirestoreAccountStore(firestore, { collection, clock }),
    cleanup: () => firestore.recursiveDelete(firestore.collection(collection)),
    seedRawDocument: async (accountId, doc) => {
      await firestore.collection(collection).doc(accountId).set(doc);
    },
  };
});

describe('FirestoreAccountStore', () => {
  it('stores accounts/{accountId} with the document update time as the version', async () => {
    const collection = uniqueName('accounts');
    try {
      const store = new FirestoreAccountStore(firestore, { collection });
      const created = await store.create(makeNewAccount());
      const snapshot = await firestore.collection(collection).doc('acc-1').get();
      const updateTime = snapshot.updateTime;
      if (updateTime === undefined) throw new Error('no update time');
      expect(created.version).toBe(
        `${updateTime.seconds}.${String(updateTime.nanoseconds).padStart(9, '0')}`,
      );
      expect(snapshot.data()).toEqual(created.account);
    } finally {
      await firestore.recursiveDelete(firestore.collection(collection));
    }
  });
});
