import { describe, expect, it } from 'vitest';
import { InMemoryFlowRunStore } from './in-memory-flow-run.store';
import {
  describeFlowRunStoreConformance,
  describeRunChangeFeedConformance,
  describeStepCheckpointConformance,
  makeFlowRun,
} from './testing';

describeStepCheckpointConformance('in-memory', async () => ({
  store: new InMemoryFlowRunStore(),
  cleanup: async () => undefined,
}));

describeFlowRunStoreConformance('in-memory', async ({ clock }) => {
  const store = new InMemoryFlowRunStore({ clock });
  return {
    store,
    cleanup: async () => undefined,
    seedRawDocument: (runId, doc) => store.seedRawDocument(runId, doc),
  };
});

describeRunChangeFeedConformance('in-memory', async (clock) => ({
  store: new InMemoryFlowRunStore({ clock }),
  cleanup: async () => undefined,
}));

describe('InMemoryFlowRunStore', () => {
  it('issues monotonically increasing counter versions', async () => {
    const store = new InMemoryFlowRunStore();
    const a = await store.create(makeFlowRun({ suffix: 'aaa' }));
    const b = await store.create(makeFlowRun({ suffix: 'bbb' }));
    const a2 = await store.update(a.run.runId, { ownerId: 'x' }, a.version);
    expect([a.version, b.version, a2.version].map(Number)).toEqual([1, 2, 3]);
  });

  it('resolves asynchronously, so a read issued after a write started sees the old state', async () => {
    const store = new InMemoryFlowRunStore();
    const created = await store.create(makeFlowRun());
    const order: string[] = [];
    const update = store
      .update(created.run.runId, { ownerId: 'late' }, created.version)
      .then(() => order.push('update'));
    order.push('sync');
    await update;
    expect(order).toEqual(['sync', 'update']);
  });
});
