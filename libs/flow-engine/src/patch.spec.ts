import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  applyPatch,
  applyPatchShared,
  cloneJson,
  deepFreeze,
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

  it('applyPatchShared gives what applyPatch gives, frozen, sharing what the patch did not touch', () => {
    const segment = fc.constantFrom('status', 'outputs', 'timing', 'a', 'b');
    const path = fc
      .tuple(
        fc.constantFrom('steps.ohlcv_export:1M', 'steps.new_step', 'progress'),
        fc.array(segment, { maxLength: 3 }),
      )
      .map(([head, rest]) => [head, ...rest].join('.'));
    const value = fc.oneof(
      fc.constant(FIELD_DELETE),
      fc.jsonValue({ maxDepth: 2 }).filter((v) => v !== null),
    );
    fc.assert(
      fc.property(fc.dictionary(path, value, { maxKeys: 4 }), (patch) => {
        const paths = Object.keys(patch);
        // Firestore refuses a path next to its own parent (prepareRunPatch checks it too).
        fc.pre(!paths.some((p) => paths.some((q) => q.startsWith(`${p}.`))));
        const run = deepFreeze(makeRun({ 'ohlcv_export:1M': {} }));
        const before = cloneJson(run);
        const shared = applyPatchShared(run, cloneJson(patch));
        expect(shared).toEqual(applyPatch(run, patch));
        expect(run).toEqual(before);
        expect(Object.isFrozen(shared) && Object.isFrozen(shared.steps)).toBe(true);
        if (!paths.some((p) => p.startsWith('steps.'))) expect(shared.steps).toBe(run.steps);
      }),
    );
  });
});
