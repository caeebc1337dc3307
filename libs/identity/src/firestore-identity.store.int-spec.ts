import type { Firestore } from '@google-cloud/firestore';
import { createFirestore } from '@tda/flow-store';
import { emulatorEndpoints, uniqueName } from '@tda/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiToken } from './api-token';
import { FirestoreIdentityStore } from './firestore-identity.store';
import { describeIdentityStoreConformance, makeTokenRecord } from './testing';

let firestore: Firestore;

beforeAll(() => {
  const { firestoreHost, projectId } = emulatorEndpoints();
  firestore = createFirestore({ projectId, emulatorHost: firestoreHost });
});

afterAll(async () => {
  await firestore.terminate();
});

describeIdentityStoreConformance('firestore (emulator)', async () => {
  const tokensCollection = uniqueName('api_tokens');
  const identitiesCollection = uniqueName('user_identities');
  return {
    store: new FirestoreIdentityStore(firestore, { tokensCollection, identitiesCollection }),
    cleanup: async () => {
      await firestore.recursiveDelete(firestore.collection(tokensCollection));
      await firestore.recursiveDelete(firestore.collection(identitiesCollection));
    },
  };
});

describe('FirestoreIdentityStore', () => {
  it('stores api_tokens/{sha256 hex}: the token itself is nowhere in the document', async () => {
    const tokensCollection = uniqueName('api_tokens');
    const store = new FirestoreIdentityStore(firestore, { tokensCollection });
    const issued = issueApiToken();
    await store.createToken(issued.hash, makeTokenRecord(issued.tokenId));
    const snapshot = await firestore.collection(tokensCollection).doc(issued.hash).get();
    expect(snapshot.exists).toBe(true);
    expect(JSON.stringify(snapshot.data())).not.toContain(issued.token.slice(4));
    await firestore.recursiveDelete(firestore.collection(tokensCollection));
  });
});
