import type { Firestore } from '@google-cloud/firestore';
import { createFirestore } from '@tda/flow-store';
import { emulatorEndpoints, uniqueName } from '@tda/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FirestoreReportIndexStore } from './firestore-report-index.store';
import { describeReportIndexStoreConformance, makeReportEntry } from './testing';

let firestore: Firestore;

beforeAll(() => {
  const { firestoreHost, projectId } = emulatorEndpoints();
  firestore = createFirestore({ projectId, emulatorHost: firestoreHost });
});

afterAll(async () => {
  await firestore.terminate();
});

describeReportIndexStoreConformance('firestore (emulator)', async () => {
  // Collections per test: parallel files and earlier tests never show up in a list.
  const reportsCollection = uniqueName('reports');
  const recommendationsCollection = uniqueName('recommendations');
  return {
    store: new FirestoreReportIndexStore(firestore, {
      reportsCollection,
      recommendationsCollection,
    }),
    cleanup: async () => {
      await firestore.recursiveDelete(firestore.collection(reportsCollection));
      await firestore.recursiveDelete(firestore.collection(recommendationsCollection));
    },
  };
});

describe('FirestoreReportIndexStore', () => {
  const reportsCollection = uniqueName('reports');

  afterAll(async () => {
    await firestore.recursiveDelete(firestore.collection(reportsCollection));
  });

  it('stores an entry as a plain document under its id', async () => {
    const store = new FirestoreReportIndexStore(firestore, { reportsCollection });
    const entry = makeReportEntry({ variant: 'raw' });
    await store.createReport(entry);
    const raw = await firestore.collection(reportsCollection).doc(entry.reportId).get();
    expect(raw.data()).toEqual(entry);
  });

  it('reads a document with unknown extra fields (tolerant read)', async () => {
    const store = new FirestoreReportIndexStore(firestore, { reportsCollection });
    const entry = makeReportEntry({ variant: 'extra' });
    await firestore
      .collection(reportsCollection)
      .doc(entry.reportId)
      .set({ ...entry, addedLater: { x: 1 } });
    expect(await store.getReport(entry.reportId)).toEqual({ ...entry, addedLater: { x: 1 } });
  });
});
