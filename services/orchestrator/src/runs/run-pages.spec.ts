import type { FlowRun } from '@tda/contracts';
import type { FlowRunStore, RunListQuery } from '@tda/flow-store';
import { describe, expect, it } from 'vitest';
import { listRunPages } from './run-pages';

/** A store whose list serves `pages` in order and records the queries it got. */
function pagedStore(pages: string[][]): { store: FlowRunStore; queries: RunListQuery[] } {
  const queries: RunListQuery[] = [];
  const unused = (): never => {
    throw new Error('not used');
  };
  const store: FlowRunStore = {
    create: unused,
    get: unused,
    update: unused,
    count: unused,
    list: (query) => {
      queries.push(query);
      const index = query.cursor === undefined ? 0 : Number(query.cursor);
      const runs = (pages[index] ?? []).map((runId) => ({ runId }) as FlowRun);
      const nextCursor = index + 1 < pages.length ? String(index + 1) : null;
      return Promise.resolve({ runs, nextCursor });
    },
  };
  return { store, queries };
}

describe('listRunPages', () => {
  it('reads every page with the filter and the largest page size', async () => {
    const { store, queries } = pagedStore([['a', 'b'], ['c']]);
    const result = await listRunPages(store, { status: 'PENDING', ownerId: 'o' }, 5);
    expect(result).toEqual({
      runs: [{ runId: 'a' }, { runId: 'b' }, { runId: 'c' }],
      truncated: false,
    });
    expect(queries).toEqual([
      { status: 'PENDING', ownerId: 'o', limit: 100 },
      { status: 'PENDING', ownerId: 'o', limit: 100, cursor: '1' },
    ]);
  });

  it('stops after maxPages and says the list was truncated', async () => {
    const { store, queries } = pagedStore([['a'], ['b'], ['c']]);
    const result = await listRunPages(store, {}, 2);
    expect(result.runs.map((run) => run.runId)).toEqual(['a', 'b']);
    expect(result.truncated).toBe(true);
    expect(queries).toHaveLength(2);
  });
});
