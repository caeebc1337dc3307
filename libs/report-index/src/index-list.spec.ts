import { describe, expect, it } from 'vitest';
import {
  compareIndexPosition,
  decodeIndexCursor,
  encodeIndexCursor,
  MAX_FILTERED_SCAN,
  scanPage,
  type IndexPosition,
  type OrderedRead,
} from './index-list';
import { InvalidIndexCursorError } from './report-index.errors';

const position = (n: number): IndexPosition => ({
  asOf: new Date(Date.UTC(2026, 0, 1) - n * 60_000).toISOString(),
  createdAt: '2026-01-01T00:00:00.000Z',
  id: `rec_${String(n).padStart(24, '0')}`,
});

/** n entries in list order; entry i carries its index as the value to filter on. */
function source(n: number): {
  read: OrderedRead<{ i: number; p: IndexPosition }>;
  reads: number[];
} {
  const all = Array.from({ length: n }, (_, i) => ({ i, p: position(i) }));
  const reads: number[] = [];
  return {
    reads,
    read: (after, count) => {
      reads.push(count);
      const start = after === null ? 0 : all.findIndex((e) => compareIndexPosition(e.p, after) > 0);
      return Promise.resolve(start < 0 ? [] : all.slice(start, start + count));
    },
  };
}

describe('index cursors', () => {
  it('round-trip a position and belong to one list kind', () => {
    const p = position(3);
    const cursor = encodeIndexCursor('recommendation', p);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeIndexCursor('recommendation', cursor)).toEqual(p);
    expect(() => decodeIndexCursor('report', cursor)).toThrow(InvalidIndexCursorError);
  });

  it('reject non-canonical instants inside the payload', () => {
    const raw = {
      v: 1,
      k: 'rec',
      a: '2026-01-01T00:00:00Z',
      c: position(0).createdAt,
      i: position(0).id,
    };
    const cursor = Buffer.from(JSON.stringify(raw)).toString('base64url');
    expect(() => decodeIndexCursor('recommendation', cursor)).toThrow(/bad asOf/);
  });
});

describe('scanPage', () => {
  const options = {
    kind: 'recommendation' as const,
    after: null,
    positionOf: (e: { p: IndexPosition }) => e.p,
  };

  it('unfiltered: one read of limit + 1, the cursor after the last entry returned', async () => {
    const { read, reads } = source(10);
    const page = await scanPage(read, { ...options, limit: 4 });
    expect(page.items.map((e) => e.i)).toEqual([0, 1, 2, 3]);
    expect(reads).toEqual([5]);
    expect(decodeIndexCursor('recommendation', page.nextCursor ?? '')).toEqual(position(3));
  });

  it('filtered: reads on until limit + 1 matches, and answers null at the end', async () => {
    const { read, reads } = source(200);
    const keep = (e: { i: number }): boolean => e.i % 40 === 0;
    const page = await scanPage(read, { ...options, limit: 3, keep });
    expect(page.items.map((e) => e.i)).toEqual([0, 40, 80]);
    expect(reads).toEqual([50, 50, 50]);
    expect(decodeIndexCursor('recommendation', page.nextCursor ?? '')).toEqual(position(80));
    const last = await scanPage(read, {
      ...options,
      limit: 3,
      keep,
      after: position(80),
    });
    expect(last).toEqual({
      items: [
        { i: 120, p: position(120) },
        { i: 160, p: position(160) },
      ],
      nextCursor: null,
    });
  });

  it('filtered: stops after MAX_FILTERED_SCAN entries with a cursor at the last one read', async () => {
    const { read } = source(MAX_FILTERED_SCAN * 2 - 10);
    const page = await scanPage(read, { ...options, limit: 5, keep: (e) => e.i === 3 });
    expect(page.items.map((e) => e.i)).toEqual([3]);
    expect(decodeIndexCursor('recommendation', page.nextCursor ?? '')).toEqual(
      position(MAX_FILTERED_SCAN - 1),
    );
    const next = await scanPage(read, {
      ...options,
      limit: 5,
      keep: (e) => e.i === 3,
      after: position(MAX_FILTERED_SCAN - 1),
    });
    expect(next.items).toEqual([]);
    expect(next.nextCursor).toBeNull();
  });
});
