import type { Firestore } from '@google-cloud/firestore';
import { emulatorEndpoints, uniqueName } from '@tda/test-support';
import { afterAll, beforeAll } from 'vitest';
import { createFirestore } from './firestore-client.factory';
import { FirestoreEvaluationStore } from './firestore-evaluation.store';
import { describeEvaluationStoreConformance } from './testing';

let firestore: Firestore;

beforeAll(() => {
  const { firestoreHost, projectId } = emulatorEndpoints();
  firestore = createFirestore({ projectId, emulatorHost: firestoreHost });
});

afterAll(async () => {
  await firestore.terminate();
});

describeEvaluationStoreConformance('firestore (emulator)', async () => {
  // A collection per test: parallel files and earlier tests never show up in a list.
  const collection = uniqueName('evaluations');
  return {
    store: new FirestoreEvaluationStore(firestore, { collection }),
    cleanup: () => firestore.recursiveDelete(firestore.collection(collection)),
  };
});
