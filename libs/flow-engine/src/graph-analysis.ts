import { findGraphIssues, topologicalOrder, type GraphIssue, type GraphSteps } from './dag';

/** What the decisions need of a run's step graph, worked out together. */
export interface GraphAnalysis {
  /** findGraphIssues: empty for a valid graph. */
  readonly issues: readonly GraphIssue[];
  /** topologicalOrder; undefined when the graph has none (an unknown or self dependency, a cycle). */
  readonly order: readonly string[] | undefined;
}

const UNORDERABLE = new Set<GraphIssue['reason']>([
  'unknown_dependency',
  'self_dependency',
  'cycle',
]);

interface Remembered {
  readonly ids: readonly string[];
  readonly dependsOn: readonly (readonly string[])[];
  readonly timeframes: readonly (string | undefined)[];
  readonly analysis: GraphAnalysis;
}

/**
 * Analyses remembered by the frozen `dependsOn` array of a graph's first step that has one. A
 * stored run's next version shares its steps' dependsOn arrays (the in-memory store writes with
 * structural sharing), so advance — which asks on every step event, twice — works the graph out
 * once per run instead (issue 16: ~11 µs per step event in a chain of 10, 0.4 µs remembered). A
 * graph read from JSON has new arrays and is simply analysed.
 */
const remembered = new WeakMap<readonly string[], Remembered>();

/** The issues and order of `steps`; the result is frozen and may be shared between calls. */
export function analyseGraph(steps: GraphSteps): GraphAnalysis {
  const ids = Object.keys(steps);
  const key = memoKey(steps, ids);
  const known = key === undefined ? undefined : remembered.get(key);
  if (known !== undefined && sameGraph(known, steps, ids)) return known.analysis;
  const analysis = analyse(steps);
  if (key !== undefined && ids.every((id) => Object.isFrozen(steps[id]?.dependsOn))) {
    remembered.set(key, {
      ids,
      dependsOn: ids.map((id) => steps[id]?.dependsOn ?? []),
      timeframes: ids.map((id) => steps[id]?.timeframe),
      analysis,
    });
  }
  return analysis;
}

function analyse(steps: GraphSteps): GraphAnalysis {
  const issues = findGraphIssues(steps);
  const orderable = !issues.some((issue) => UNORDERABLE.has(issue.reason));
  const order = orderable ? Object.freeze(topologicalOrder(steps)) : undefined;
  return Object.freeze({ issues: Object.freeze(issues.map((i) => Object.freeze(i))), order });
}

/** The first non-empty dependsOn array: one made for this run (an empty one may be shared). */
function memoKey(steps: GraphSteps, ids: readonly string[]): readonly string[] | undefined {
  for (const id of ids) {
    const dependsOn = steps[id]?.dependsOn;
    if (dependsOn !== undefined && dependsOn.length > 0) return dependsOn;
  }
  return undefined;
}

/** Same ids in the same order, the same (frozen, so unchanged) arrays, the same timeframes. */
function sameGraph(known: Remembered, steps: GraphSteps, ids: readonly string[]): boolean {
  if (known.ids.length !== ids.length) return false;
  return ids.every((id, i) => {
    const step = steps[id];
    return (
      known.ids[i] === id &&
      step !== undefined &&
      step.dependsOn === known.dependsOn[i] &&
      step.timeframe === known.timeframes[i]
    );
  });
}
