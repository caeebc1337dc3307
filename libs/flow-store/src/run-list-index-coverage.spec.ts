import { indexServing, recordingFirestore, type QueryShape } from '@tda/test-support';
import { describe, expect, it } from 'vitest';
import { FirestoreFlowRunStore } from './firestore-flow-run.store';

/**
 * The run list queries of the backtest jobs API (an owner's backtest_v1 runs, by state; the
 * quota's count of queued and running ones) must each have one composite index in
 * deploy/firestore/firestore.indexes.json, without relying on Firestore's index merging.
 */
describe('deploy/firestore/firestore.indexes.json covers the backtest job queries', () => {
  it('an index serves each recorded shape', async () => {
    const shapes: QueryShape[] = [];
    const store = new FirestoreFlowRunStore(recordingFirestore(shapes));
    await store.list({ ownerId: 'alice', flowKey: 'backtest_v1', limit: 20 });
    await store.list({ ownerId: 'alice', flowKey: 'backtest_v1', status: 'RUNNING', limit: 4 });
    expect(shapes.map((s) => [...s.equality].sort())).toEqual([
      ['flowKey', 'ownerId'],
      ['flowKey', 'ownerId', 'status'],
    ]);
    for (const shape of shapes) expect(indexServing(shape), JSON.stringify(shape)).toBeDefined();
  });
});
