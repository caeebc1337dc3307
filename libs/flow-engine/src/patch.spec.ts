import { describe, expect, it } from 'vitest';
import {
  applyPatch,
  FIELD_DELETE,
  isEmptyPatch,
  mergePatches,
  sortedSteps,
  stepPatch,
} from './patch';
import { makeRun } from './testing/run-fixtures';

describe('patch model', () => {
  it('applies dotted paths without mutating the input, creating maps and deleting fields', () => {
    const run = makeRun({
      'ohlcv_export:1M': { error: { code: 'CANCELLED', message: 'x', retryable: false } },
    });
    const next = applyPatch(run, {
      ...stepPatch('ohlcv_export:1M', {
        status: 'READY',
        'outputs.execution.timing.startedAt': 'T',
      }),
      'steps.ohlcv_export:1M.error': FIELD_DELETE,
    });
    expect(next.steps['ohlcv_export:1M']).toMatchObject({
      status: 'READY',
      outputs: { execution: { timing: { startedAt: 'T' } } },
    });
    expect(next.steps['ohlcv_export:1M']?.error).toBeUndefined();
    expect(run.steps['ohlcv_export:1M']?.status).toBe('PENDING');
    expect(run.steps['ohlcv_export:1M']?.error).toBeDefined();
  });

  it('merges left to right, a parent path replacing earlier child paths', () => {
    expect(mergePatches({ 'a.b': 1, c: 1 }, { a: { x: 1 } }, { c: 2 })).toEqual({
      a: { x: 1 },
      c: 2,
    });
    // A child of an earlier parent folds into it: one key, as Firestore requires.
    const inserted = { 'steps.x': { status: 'PENDING', dependsOn: [] } };
    expect(mergePatches(inserted, { 'steps.x.status': 'READY', 'steps.x.readyAt': 't' })).toEqual({
      'steps.x': { status: 'READY', dependsOn: [], readyAt: 't' },
    });
    expect(inserted['steps.x'].status).toBe('PENDING');
    expect(isEmptyPatch(mergePatches())).toBe(true);
  });

  it('lists steps in stepId order', () => {
    expect(sortedSteps(makeRun({ b: {}, a: {}, c: {} })).map(([id]) => id)).toEqual([
      'a',
      'b',
      'c',
    ]);
  });
});
