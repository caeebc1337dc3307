import type { Firestore } from '@google-cloud/firestore';
import { emulatorEndpoints, uniqueName } from '@tda/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFirestore } from './firestore-client.factory';
import { FirestoreFlowRunStore } from './firestore-flow-run.store';
import {
  describeFlowRunStoreConformance,
  describeRunChangeFeedConformance,
  describeStepCheckpointConformance,
  makeFlowRun,
} from './testing';

let firestore: Firestore;

beforeAll(() => {
  const { firestoreHost, projectId } = emulatorEndpoints();
  firestore = createFirestore({ projectId, emulatorHost: firestoreHost });
});

afterAll(async () => {
  await firestore.terminate();
});

describeFlowRunStoreConformance('firestore (emulator)', async ({ clock }) => {
  // A collection per test: parallel files and earlier tests never show up in a list.
  const collection = uniqueName('flow_runs');
  return {
    store: new FirestoreFlowRunStore(firestore, { collection, clock }),
    cleanup: () => firestore.recursiveDelete(firestore.collection(collection)),
    seedRawDocument: async (runId, doc) => {
      await firestore.collection(collection).doc(runId).set(doc);
    },
  };
});

describeStepCheckpointConformance('firestore (emulator)', async () => {
  const collection = uniqueName('flow_runs');
  return {
    store: new FirestoreFlowRunStore(firestore, { collection }),
    cleanup: () => firestore.recursiveDelete(firestore.collection(collection)),
  };
});

describeRunChangeFeedConformance('firestore (emulator)', async (clock) => {
  const collection = uniqueName('flow_runs');
  return {
    store: new FirestoreFlowRunStore(firestore, { collection, clock }),
    cleanup: () => firestore.recursiveDelete(firestore.collection(collection)),
  };
});

describe('FirestoreFlowRunStore', () => {
  const collection = uniqueName('flow_runs');

  afterAll(async () => {
    await firestore.recursiveDelete(firestore.collection(collection));
  });

  it('uses the exact document update time as the version', async () => {
    const store = new FirestoreFlowRunStore(firestore, { collection });
    const created = await store.create(makeFlowRun({ suffix: 'ver' }));
    const snapshot = await firestore.collection(collection).doc(created.run.runId).get();
    const updateTime = snapshot.updateTime;
    if (updateTime === undefined) throw new Error('no update time');
    expect(created.version).toMatch(/^\d+\.\d{9}$/);
    expect(created.version).toBe(
      `${updateTime.seconds}.${String(updateTime.nanoseconds).padStart(9, '0')}`,
    );
  });

  it('stores stepIds with ":" and "-" as single map keys under steps', async () => {
    const store = new FirestoreFlowRunStore(firestore, { collection });
    const created = await store.create(makeFlowRun({ suffix: 'path' }));
    const stepId = 'llm_report:1d:prompt-day_v1:model-x';
    await store.update(
      created.run.runId,
      { [`steps.${stepId}.status`]: 'READY', 'steps.ohlcv_export:1d.attempt': 2 },
      created.version,
    );
    const raw = (await firestore.collection(collection).doc(created.run.runId).get()).data();
    const steps = raw?.['steps'] as Record<string, Record<string, unknown>> | undefined;
    expect(steps?.[stepId]).toEqual({ status: 'READY' });
    expect(steps?.['ohlcv_export:1d']?.['attempt']).toBe(2);
    expect(Object.keys(steps ?? {}).sort()).toEqual(
      ['llm_report:1d:prompt_day_v1', stepId, 'ohlcv_export:1d'].sort(),
    );
  });

  it('returns the written run when another instance read the version (read at write time)', async () => {
    const clock = (): Date => new Date('2026-04-01T08:00:00.000Z');
    const reader = new FirestoreFlowRunStore(firestore, { collection });
    const writer = new FirestoreFlowRunStore(firestore, {
      collection,
      clock,
      snapshotCacheSize: 0,
    });
    const created = await reader.create(makeFlowRun({ suffix: 'miss' }));
    const updated = await writer.update(
      created.run.runId,
      { 'steps.ohlcv_export:1d.status': 'RUNNING' },
      created.version,
    );
    // A later write must not leak into the result of the earlier one.
    await reader.update(created.run.runId, { ownerId: 'later' }, updated.version);
    expect(updated.run.steps['ohlcv_export:1d']?.status).toBe('RUNNING');
    expect(updated.run.ownerId).toBe('user-1');
    expect(updated.run).toEqual({
      ...created.run,
      updatedAt: '2026-04-01T08:00:00.000Z',
      steps: {
        ...created.run.steps,
        'ohlcv_export:1d': { ...created.run.steps['ohlcv_export:1d'], status: 'RUNNING' },
      },
    });
    const current = await reader.get(created.run.runId);
    expect(current?.run.ownerId).toBe('later');
    expect(current?.version).not.toBe(updated.version);
  });
});
