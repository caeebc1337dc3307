import { type Firestore, Timestamp } from '@google-cloud/firestore';
import { createFirestore } from '@tda/flow-store';
import { emulatorEndpoints, uniqueName } from '@tda/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PROMPTS } from './default-registry';
import { FirestorePromptRegistry } from './firestore-prompt.registry';
import { describePromptRegistryConformance } from './testing';

let firestore: Firestore;

beforeAll(() => {
  const { firestoreHost, projectId } = emulatorEndpoints();
  firestore = createFirestore({ projectId, emulatorHost: firestoreHost });
});

afterAll(async () => {
  await firestore.terminate();
});

describePromptRegistryConformance('FirestorePromptRegistry (emulator)', async () => {
  // unique collections per test: parallel files and earlier tests never interfere
  const promptsCollection = uniqueName('llm_prompts');
  const schemasCollection = uniqueName('llm_schemas');
  const collectionOf = (c: 'prompts' | 'schemas'): string =>
    c === 'prompts' ? promptsCollection : schemasCollection;
  return {
    registry: new FirestorePromptRegistry(firestore, { promptsCollection, schemasCollection }),
    putRawDocument: async (collection, id, data) => {
      await firestore
        .collection(collectionOf(collection))
        .doc(id)
        .set(data as Record<string, unknown>);
    },
    cleanup: async () => {
      await firestore.recursiveDelete(firestore.collection(promptsCollection));
      await firestore.recursiveDelete(firestore.collection(schemasCollection));
    },
  };
});

describe('FirestorePromptRegistry', () => {
  it('reads Firestore timestamps (written from a console) as RFC 3339 strings', async () => {
    const promptsCollection = uniqueName('llm_prompts');
    const month = DEFAULT_PROMPTS[0];
    if (month === undefined) throw new Error('no default prompt');
    await firestore
      .collection(promptsCollection)
      .doc(month.promptId)
      .set({ ...month, createdAt: Timestamp.fromDate(new Date('2026-02-01T10:00:00Z')) });
    const registry = new FirestorePromptRegistry(firestore, { promptsCollection });
    expect(await registry.getPrompt(month.promptId)).toEqual({
      ...month,
      createdAt: '2026-02-01T10:00:00.000Z',
    });
    await firestore.recursiveDelete(firestore.collection(promptsCollection));
  });

  it('uses llm_prompts and llm_schemas by default', async () => {
    const registry = new FirestorePromptRegistry(firestore);
    // a unique id in the default collections: the emulator is shared, the id is not
    const promptId = `prompt_${uniqueName('default').replace(/[^a-z0-9]/g, '_')}_v1`;
    const month = DEFAULT_PROMPTS[0];
    if (month === undefined) throw new Error('no default prompt');
    await registry.savePrompt({ ...month, promptId }, 'create');
    const raw = await firestore.collection('llm_prompts').doc(promptId).get();
    expect(raw.get('promptId')).toBe(promptId);
    await raw.ref.delete();
  });
});
