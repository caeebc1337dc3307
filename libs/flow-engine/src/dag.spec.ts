import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ancestorsOf,
  findCycle,
  findGraphIssues,
  RunGraphInvalidError,
  topologicalOrder,
  validateRunGraph,
  type GraphSteps,
} from './dag';
import { FlowRunInvalidError } from './errors';
import { dagArbitrary } from './testing/dag-arbitrary';

function thrown(fn: () => unknown): RunGraphInvalidError {
  try {
    fn();
  } catch (error) {
    if (error instanceof RunGraphInvalidError) return error;
    throw error;
  }
  throw new Error('expected a RunGraphInvalidError');
}

const graph = (
  deps: Record<string, string[]>,
  timeframes: Record<string, string> = {},
): GraphSteps =>
  Object.fromEntries(
    Object.entries(deps).map(([id, dependsOn]) => [
      id,
      timeframes[id] === undefined ? { dependsOn } : { dependsOn, timeframe: timeframes[id] },
    ]),
  );

describe('validateRunGraph', () => {
  it('accepts a valid DAG', () => {
    expect(() => validateRunGraph(graph({ a: [], b: ['a'], c: ['a', 'b'] }))).not.toThrow();
  });

  it('reports an unknown dependency naming the step and the dependency', () => {
    const error = thrown(() => validateRunGraph(graph({ a: [], b: ['a', 'ghost'] })));
    expect(error).toBeInstanceOf(FlowRunInvalidError);
    expect(error.code).toBe('FLOW_RUN_INVALID');
    expect(error.details).toMatchObject({
      reason: 'unknown_dependency',
      stepId: 'b',
      dependsOn: 'ghost',
    });
    expect(error.toErrorInfo()).toMatchObject({ code: 'FLOW_RUN_INVALID', retryable: false });
  });

  it('reports a self-dependency', () => {
    const error = thrown(() => validateRunGraph(graph({ a: ['a'] })));
    expect(error.details).toMatchObject({ reason: 'self_dependency', stepId: 'a' });
  });

  it('reports a cycle with its path', () => {
    const error = thrown(() => validateRunGraph(graph({ a: ['c'], b: ['a'], c: ['b'], d: [] })));
    expect(error.details).toMatchObject({ reason: 'cycle', cycle: ['a', 'c', 'b', 'a'] });
    expect(error.message).toContain('a -> c -> b -> a');
  });

  it('reports storage-unsafe stepIds', () => {
    const error = thrown(() => validateRunGraph(graph({ 'a.b': [] })));
    expect(error.details).toMatchObject({ reason: 'unsafe_step_id', stepId: 'a.b' });
  });

  it('enforces the timeframe invariant (seed 002)', () => {
    const error = thrown(() =>
      validateRunGraph(graph({ 'ohlcv_export:1M': [] }, { 'ohlcv_export:1M': '1w' })),
    );
    expect(error.details).toMatchObject({
      reason: 'timeframe_mismatch',
      stepId: 'ohlcv_export:1M',
      timeframe: '1w',
      stepIdTimeframe: '1M',
    });
    const missing = thrown(() => validateRunGraph(graph({ 'ohlcv_export:1M': [] })));
    expect(missing.details).toMatchObject({ reason: 'timeframe_mismatch', timeframe: null });
    // no timeframe segment: any (or no) step.timeframe is fine
    expect(() =>
      validateRunGraph(graph({ account_export: [] }, { account_export: '1d' })),
    ).not.toThrow();
  });

  it('reports duplicates and the empty graph, and counts every issue', () => {
    expect(findGraphIssues({})).toEqual([{ reason: 'no_steps' }]);
    const error = thrown(() => validateRunGraph(graph({ a: [], b: ['a', 'a', 'x'] })));
    expect(error.issues.map((i) => i.reason)).toEqual([
      'duplicate_dependency',
      'unknown_dependency',
    ]);
    expect(error.details).toMatchObject({ issueCount: 2 });
  });
});

describe('topologicalOrder', () => {
  it('orders dependencies first, lexicographic among peers', () => {
    expect(topologicalOrder(graph({ z: [], b: ['z'], a: ['z'], c: ['a', 'b'] }))).toEqual([
      'z',
      'a',
      'b',
      'c',
    ]);
  });

  it('throws on cycles and unknown dependencies', () => {
    expect(() => topologicalOrder(graph({ a: ['b'], b: ['a'] }))).toThrow(FlowRunInvalidError);
    expect(() => topologicalOrder(graph({ a: ['x'] }))).toThrow(FlowRunInvalidError);
  });

  it('takes the smallest ready stepId first on random DAGs (Kahn with a sorted queue)', () => {
    fc.assert(
      fc.property(dagArbitrary(12), ({ deps }) => {
        const order = topologicalOrder(graph(deps));
        // Reference: at every turn, the smallest id whose dependencies are all placed.
        const placed = new Set<string>();
        const expected: string[] = [];
        while (expected.length < Object.keys(deps).length) {
          const next = Object.keys(deps)
            .filter((id) => !placed.has(id) && (deps[id] ?? []).every((d) => placed.has(d)))
            .sort()[0];
          if (next === undefined) throw new Error('unreachable: the arbitrary makes DAGs');
          placed.add(next);
          expected.push(next);
        }
        expect(order).toEqual(expected);
      }),
    );
  });

  it('lists ancestors transitively', () => {
    expect([...ancestorsOf(graph({ a: [], b: ['a'], c: ['b'], d: [] }), 'c')].sort()).toEqual([
      'a',
      'b',
    ]);
  });
});

const dagArb = dagArbitrary(12);

describe('graph properties', () => {
  it('random DAGs validate and topologicalOrder respects every dependency', () => {
    fc.assert(
      fc.property(dagArb, ({ deps }) => {
        const steps = graph(deps);
        expect(findGraphIssues(steps)).toEqual([]);
        const order = topologicalOrder(steps);
        expect([...order].sort()).toEqual(Object.keys(deps).sort());
        for (const [id, ds] of Object.entries(deps)) {
          for (const d of ds) expect(order.indexOf(d)).toBeLessThan(order.indexOf(id));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('an injected back edge is reported as a cycle through it, as a closed dependency path', () => {
    fc.assert(
      fc.property(dagArb, fc.nat(), fc.nat(), ({ names, deps }, x, y) => {
        // names[i] may only depend on lower indices, so lower -> higher closes a cycle
        const i = x % names.length;
        const j = i + (y % (names.length - i));
        const from = names[i] ?? '';
        const to = names[j] ?? '';
        const mutated = { ...deps, [from]: [...(deps[from] ?? []), to] };
        if (i !== j) mutated[to] = [...new Set([...(deps[to] ?? []), from])];
        const error = thrown(() => validateRunGraph(graph(mutated)));
        if (i === j) {
          expect(error.details).toMatchObject({ reason: 'self_dependency', stepId: from });
          return;
        }
        expect(error.details['reason']).toBe('cycle');
        const cycle = findCycle(graph(mutated)) ?? [];
        expect(error.details['cycle']).toEqual(cycle);
        expect(cycle[0]).toBe(cycle[cycle.length - 1]);
        for (let k = 0; k + 1 < cycle.length; k++) {
          expect(mutated[cycle[k] ?? '']).toContain(cycle[k + 1]);
        }
        expect(cycle).toContain(from);
        expect(cycle).toContain(to);
      }),
      { numRuns: 300 },
    );
  });

  it('an injected unknown dependency is reported with the offending step and id', () => {
    fc.assert(
      fc.property(dagArb, fc.nat(), ({ names, deps }, x) => {
        const victim = names[x % names.length] ?? '';
        const mutated = { ...deps, [victim]: [...(deps[victim] ?? []), 'ghost_step'] };
        const error = thrown(() => validateRunGraph(graph(mutated)));
        expect(error.details).toMatchObject({
          reason: 'unknown_dependency',
          stepId: victim,
          dependsOn: 'ghost_step',
        });
      }),
      { numRuns: 300 },
    );
  });
});
