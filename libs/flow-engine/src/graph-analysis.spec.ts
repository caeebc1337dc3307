import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findGraphIssues, topologicalOrder, type GraphSteps } from './dag';
import { analyseGraph } from './graph-analysis';
import { deepFreeze } from './patch';
import { dagArbitrary } from './testing/dag-arbitrary';

interface Step {
  dependsOn: string[];
  timeframe?: string;
}

const chain = (): { a: Step; b: Step; c: Step } => ({
  a: { dependsOn: [] },
  b: { dependsOn: ['a'] },
  c: { dependsOn: ['b'] },
});

/** The next version as the in-memory store writes it: new maps, the same dependsOn arrays. */
const nextVersion = (steps: GraphSteps): GraphSteps =>
  deepFreeze(Object.fromEntries(Object.entries(steps).map(([id, s]) => [id, { ...s }])));

describe('analyseGraph', () => {
  it('gives findGraphIssues and topologicalOrder for any DAG', () => {
    fc.assert(
      fc.property(dagArbitrary(), ({ deps }) => {
        const steps = deepFreeze(
          Object.fromEntries(Object.entries(deps).map(([id, dependsOn]) => [id, { dependsOn }])),
        );
        const first = analyseGraph(steps);
        // Remembered by a dependsOn array made for the run; a graph without one is worked out.
        const remembered = Object.values(deps).some((d) => d.length > 0);
        expect(analyseGraph(nextVersion(steps)) === first).toBe(remembered);
        const analysis = analyseGraph(steps);
        expect(analysis.issues).toEqual(findGraphIssues(steps));
        expect(analysis.order).toEqual(topologicalOrder(steps));
      }),
    );
  });

  it('has no order for a cycle or an unknown dependency, and keeps the issues', () => {
    const cycle = analyseGraph({ a: { dependsOn: ['b'] }, b: { dependsOn: ['a'] } });
    expect(cycle.order).toBeUndefined();
    expect(cycle.issues).toEqual([{ reason: 'cycle', cycle: ['a', 'b', 'a'] }]);
    const unknown = analyseGraph({ a: { dependsOn: ['zz'] } });
    expect(unknown.order).toBeUndefined();
    expect(unknown.issues[0]).toMatchObject({ reason: 'unknown_dependency' });
  });

  it('orders a graph whose only issues leave it orderable (a timeframe mismatch)', () => {
    const steps = {
      'ohlcv_export:1M': { dependsOn: [], timeframe: '1w' },
      b: { dependsOn: ['ohlcv_export:1M'] },
    };
    const analysis = analyseGraph(steps);
    expect(analysis.issues[0]).toMatchObject({ reason: 'timeframe_mismatch' });
    expect(analysis.order).toEqual(['ohlcv_export:1M', 'b']);
  });

  it("answers a frozen run's next version, which shares its arrays, from memory", () => {
    const first = deepFreeze(chain());
    const analysis = analyseGraph(first);
    expect(analyseGraph(nextVersion(first))).toBe(analysis);
  });

  it('works a graph out again when a dependsOn array, a timeframe or a step is new', () => {
    const first = deepFreeze(chain());
    const analysis = analyseGraph(first);
    const rewired = deepFreeze({ ...first, c: { dependsOn: ['a'] } });
    expect(analyseGraph(rewired).order).toEqual(['a', 'b', 'c']);
    expect(analyseGraph(rewired)).not.toBe(analysis);
    const grown = deepFreeze({ ...first, d: { dependsOn: ['c'] } });
    expect(analyseGraph(grown).order).toEqual(['a', 'b', 'c', 'd']);
    const retimed = deepFreeze({
      ...first,
      b: { dependsOn: first.b.dependsOn, timeframe: '1h' },
    });
    expect(analyseGraph(retimed)).not.toBe(analysis);
    const shrunk = deepFreeze({ a: first.a, b: first.b });
    expect(analyseGraph(shrunk).order).toEqual(['a', 'b']);
  });

  it('never remembers a graph whose arrays can still change', () => {
    const steps = chain();
    expect(analyseGraph(steps).order).toEqual(['a', 'b', 'c']);
    steps.b.dependsOn.splice(0, 1, 'c');
    steps.c.dependsOn.splice(0, 1, 'a');
    expect(analyseGraph(steps).order).toEqual(['a', 'c', 'b']);
  });

  it('hands out a frozen result', () => {
    const analysis = analyseGraph({ a: { dependsOn: ['a'] } });
    expect(Object.isFrozen(analysis)).toBe(true);
    expect(Object.isFrozen(analysis.issues)).toBe(true);
    expect(Object.isFrozen(analysis.issues[0])).toBe(true);
  });
});
