import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidCursorError, InvalidListQueryError } from './flow-store.errors';
import {
  type ListPosition,
  compareListPosition,
  decodeCursor,
  encodeCursor,
  toPage,
  validateListQuery,
} from './run-list';
import { makeFlowRun, makeRunId } from './testing';

const position: ListPosition = {
  createdAt: '2026-01-15T10:00:00.000Z',
  runId: makeRunId({ at: '2026-01-15T10:00:00.000Z', suffix: 'abc' }),
};

describe('list cursor', () => {
  it('round-trips a position through an opaque base64url token with a version tag', () => {
    const cursor = encodeCursor(position);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))).toEqual({
      v: 1,
      ...position,
    });
    expect(decodeCursor(cursor)).toEqual(position);
  });

  it.each([
    ['empty', ''],
    ['not base64url', 'a+b/c='],
    ['not JSON', Buffer.from('{oops').toString('base64url')],
    ['JSON null', Buffer.from('null').toString('base64url')],
    ['another version', Buffer.from(JSON.stringify({ v: 2, ...position })).toString('base64url')],
    ['no version', Buffer.from(JSON.stringify(position)).toString('base64url')],
    [
      'bad createdAt',
      Buffer.from(JSON.stringify({ v: 1, createdAt: 'yesterday', runId: position.runId })).toString(
        'base64url',
      ),
    ],
    [
      'bad runId',
      Buffer.from(JSON.stringify({ v: 1, createdAt: position.createdAt, runId: 'x/y' })).toString(
        'base64url',
      ),
    ],
    [
      'non-canonical key order',
      Buffer.from(
        JSON.stringify({ runId: position.runId, createdAt: position.createdAt, v: 1 }),
      ).toString('base64url'),
    ],
    ['trailing garbage', `${encodeCursor(position)}AA`],
    ['too long', 'A'.repeat(600)],
  ])('rejects a malformed cursor (%s)', (_label, cursor) => {
    expect(() => decodeCursor(cursor)).toThrow(InvalidCursorError);
  });

  it('decodes nothing but what it encoded', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (garbage) => {
        try {
          const decoded = decodeCursor(garbage);
          expect(encodeCursor(decoded)).toBe(garbage);
        } catch (error) {
          expect(error).toBeInstanceOf(InvalidCursorError);
        }
      }),
    );
  });
});

describe('validateListQuery', () => {
  it('accepts limits 1..100 and keeps only the given filters', () => {
    expect(validateListQuery({ limit: 1 })).toEqual({ limit: 1, after: null, filters: {} });
    expect(
      validateListQuery({
        limit: 100,
        status: 'FAILED',
        ownerId: 'u',
        cursor: encodeCursor(position),
      }),
    ).toEqual({ limit: 100, after: position, filters: { status: 'FAILED', ownerId: 'u' } });
  });

  it('rejects out-of-range limits and unknown statuses', () => {
    for (const limit of [0, 101, 2.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => validateListQuery({ limit })).toThrow(InvalidListQueryError);
    }
    expect(() => validateListQuery({ limit: 5, status: 'DONE' as unknown as 'FAILED' })).toThrow(
      InvalidListQueryError,
    );
  });
});

describe('list order and pages', () => {
  it('sorts createdAt desc, then runId desc', () => {
    const items: ListPosition[] = [
      { createdAt: '2026-01-01T00:00:01.000Z', runId: 'a' },
      { createdAt: '2026-01-01T00:00:02.000Z', runId: 'a' },
      { createdAt: '2026-01-01T00:00:01.000Z', runId: 'b' },
    ];
    expect([...items].sort(compareListPosition)).toEqual([items[1], items[2], items[0]]);
  });

  it('emits a cursor only when more runs exist than the limit', () => {
    const runs = ['aaa', 'bbb', 'ccc'].map((suffix) => makeFlowRun({ suffix }));
    expect(toPage(runs.slice(0, 2), 2)).toEqual({ runs: runs.slice(0, 2), nextCursor: null });
    const page = toPage(runs, 2);
    expect(page.runs).toEqual(runs.slice(0, 2));
    expect(page.nextCursor === null ? null : decodeCursor(page.nextCursor)).toEqual({
      createdAt: runs[1]?.createdAt,
      runId: runs[1]?.runId,
    });
  });
});
