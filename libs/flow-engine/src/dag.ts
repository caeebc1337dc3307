import { FlowRunInvalidError } from './errors';
import { isStorageSafeStepId, stepIdTimeframe } from './ids';
import { ownStep } from './step-lookup';

/** The part of a step the graph rules look at (a FlowStep satisfies it). */
export interface GraphStep {
  readonly dependsOn: readonly string[];
  readonly timeframe?: string;
}

export type GraphSteps = Readonly<Record<string, GraphStep>>;

/** One problem with a step graph; every variant names its offender. */
export type GraphIssue =
  | { reason: 'no_steps' }
  | { reason: 'unsafe_step_id'; stepId: string }
  | { reason: 'self_dependency'; stepId: string }
  | { reason: 'unknown_dependency'; stepId: string; dependsOn: string }
  | { reason: 'duplicate_dependency'; stepId: string; dependsOn: string }
  | {
      reason: 'timeframe_mismatch';
      stepId: string;
      timeframe: string | null;
      stepIdTimeframe: string;
    }
  /** A closed path: first element === last element, each element depends on the next one. */
  | { reason: 'cycle'; cycle: string[] };

const ISSUE_MESSAGES: {
  [R in GraphIssue['reason']]: (issue: Extract<GraphIssue, { reason: R }>) => string;
} = {
  no_steps: () => 'the run has no steps',
  unsafe_step_id: (i) => `stepId '${i.stepId}' is not storage-safe`,
  self_dependency: (i) => `step '${i.stepId}' depends on itself`,
  unknown_dependency: (i) => `step '${i.stepId}' depends on unknown step '${i.dependsOn}'`,
  duplicate_dependency: (i) => `step '${i.stepId}' lists dependency '${i.dependsOn}' twice`,
  timeframe_mismatch: (i) =>
    `step '${i.stepId}' has timeframe ${i.timeframe === null ? '(none)' : `'${i.timeframe}'`} but its stepId says '${i.stepIdTimeframe}'`,
  cycle: (i) => `dependency cycle ${i.cycle.join(' -> ')}`,
};

export function describeGraphIssue(issue: GraphIssue): string {
  return (ISSUE_MESSAGES[issue.reason] as (i: GraphIssue) => string)(issue);
}

/**
 * Every problem of a step graph, in a deterministic order: per step (lexicographic) the id,
 * self/unknown/duplicate dependencies and the timeframe invariant (seed 002: step.timeframe must
 * equal the timeframe embedded in the stepId), then at most one cycle (cycles are only searched
 * when every dependency is known).
 */
export function findGraphIssues(steps: GraphSteps): GraphIssue[] {
  const ids = Object.keys(steps).sort();
  if (ids.length === 0) return [{ reason: 'no_steps' }];
  const issues: GraphIssue[] = [];
  for (const stepId of ids) {
    const step = steps[stepId];
    if (step === undefined) continue;
    if (!isStorageSafeStepId(stepId)) issues.push({ reason: 'unsafe_step_id', stepId });
    const seen = new Set<string>();
    for (const dep of step.dependsOn) {
      if (dep === stepId) issues.push({ reason: 'self_dependency', stepId });
      else if (!Object.hasOwn(steps, dep))
        issues.push({ reason: 'unknown_dependency', stepId, dependsOn: dep });
      if (seen.has(dep)) issues.push({ reason: 'duplicate_dependency', stepId, dependsOn: dep });
      seen.add(dep);
    }
    const embedded = stepIdTimeframe(stepId);
    if (embedded !== undefined && step.timeframe !== embedded) {
      issues.push({
        reason: 'timeframe_mismatch',
        stepId,
        timeframe: step.timeframe ?? null,
        stepIdTimeframe: embedded,
      });
    }
  }
  const structural = issues.some(
    (i) => i.reason === 'unknown_dependency' || i.reason === 'self_dependency',
  );
  if (!structural) {
    const cycle = findCycle(steps);
    if (cycle !== undefined) issues.push({ reason: 'cycle', cycle });
  }
  return issues;
}

/**
 * The first dependency cycle found by a DFS over stepIds in lexicographic order, as a closed path
 * [a, b, ..., a] where each element depends on the next; undefined when the graph is acyclic.
 * Unknown dependencies are ignored here (findGraphIssues reports them separately).
 */
export function findCycle(steps: GraphSteps): string[] | undefined {
  const state = new Map<string, 'visiting' | 'done'>();
  const path: string[] = [];
  const visit = (id: string): string[] | undefined => {
    const mark = state.get(id);
    if (mark === 'done') return undefined;
    if (mark === 'visiting') return [...path.slice(path.indexOf(id)), id];
    state.set(id, 'visiting');
    path.push(id);
    const deps = [...(steps[id]?.dependsOn ?? [])].filter((d) => Object.hasOwn(steps, d)).sort();
    for (const dep of deps) {
      const cycle = visit(dep);
      if (cycle !== undefined) return cycle;
    }
    path.pop();
    state.set(id, 'done');
    return undefined;
  };
  for (const id of Object.keys(steps).sort()) {
    const cycle = visit(id);
    if (cycle !== undefined) return cycle;
  }
  return undefined;
}

/**
 * Throws FlowRunInvalidError (code FLOW_RUN_INVALID) for the first graph issue; its details are
 * that issue (naming the offender) plus the total issue count, and `issues` carries all of them.
 */
export function validateRunGraph(steps: GraphSteps): void {
  const issues = findGraphIssues(steps);
  const [first] = issues;
  if (first === undefined) return;
  throw new RunGraphInvalidError(issues, first);
}

/** FlowRunInvalidError raised by validateRunGraph, carrying every issue found. */
export class RunGraphInvalidError extends FlowRunInvalidError {
  constructor(
    readonly issues: readonly GraphIssue[],
    first: GraphIssue,
  ) {
    super(
      issues.length > 1
        ? `${describeGraphIssue(first)} (and ${issues.length - 1} more issue(s))`
        : describeGraphIssue(first),
      { ...first, issueCount: issues.length },
    );
  }
}

/**
 * Steps ordered so that every step comes after all of its dependencies; among steps that are
 * ready at the same time, lexicographic stepId order (Kahn). Throws like validateRunGraph when
 * the graph has a cycle or an unknown dependency.
 */
export function topologicalOrder(steps: GraphSteps): string[] {
  const ids = Object.keys(steps).sort();
  const blocking = new Map<string, number>();
  const dependents = new Map<string, string[]>();
  for (const id of ids) {
    const deps = new Set(steps[id]?.dependsOn ?? []);
    for (const dep of deps) {
      if (!Object.hasOwn(steps, dep) || dep === id) validateRunGraph(steps);
      const list = dependents.get(dep);
      if (list === undefined) dependents.set(dep, [id]);
      else list.push(id);
    }
    blocking.set(id, deps.size);
  }
  // `ready` stays sorted (ids are visited in order, later ones inserted in place): the next step
  // is always its head, without sorting the queue on every turn (this runs on every advance).
  const ready = ids.filter((id) => blocking.get(id) === 0);
  const order: string[] = [];
  for (let head = 0; head < ready.length; head += 1) {
    const id = ready[head];
    if (id === undefined) break;
    order.push(id);
    for (const dependent of dependents.get(id) ?? []) {
      const left = (blocking.get(dependent) ?? 0) - 1;
      blocking.set(dependent, left);
      if (left === 0) insertSorted(ready, dependent, head + 1);
    }
  }
  if (order.length !== ids.length) {
    const cycle = findCycle(steps) ?? [];
    throw new RunGraphInvalidError([{ reason: 'cycle', cycle }], { reason: 'cycle', cycle });
  }
  return order;
}

/** Inserts `id` into the sorted part of `list` that starts at `from`. */
function insertSorted(list: string[], id: string, from: number): void {
  let lo = from;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const value = list[mid];
    if (value !== undefined && value < id) lo = mid + 1;
    else hi = mid;
  }
  list.splice(lo, 0, id);
}

/** Every step that `stepId` depends on, directly or transitively (unknown ids are skipped). */
export function ancestorsOf(steps: GraphSteps, stepId: string): Set<string> {
  const seen = new Set<string>();
  const stack = [...(ownStep(steps, stepId)?.dependsOn ?? [])];
  while (stack.length > 0) {
    const id = stack.pop();
    if (id === undefined || seen.has(id) || !Object.hasOwn(steps, id)) continue;
    seen.add(id);
    stack.push(...(ownStep(steps, id)?.dependsOn ?? []));
  }
  return seen;
}

/** `stepId` and every step that depends on it, directly or transitively (what a rerun re-executes). */
export function downstreamOf(steps: GraphSteps, stepId: string): Set<string> {
  const dependents = new Map<string, string[]>();
  for (const [id, step] of Object.entries(steps)) {
    for (const dep of step.dependsOn) dependents.set(dep, [...(dependents.get(dep) ?? []), id]);
  }
  const found = new Set<string>([stepId]);
  const stack = [stepId];
  for (let id = stack.pop(); id !== undefined; id = stack.pop()) {
    for (const next of dependents.get(id) ?? []) {
      if (found.has(next)) continue;
      found.add(next);
      stack.push(next);
    }
  }
  return found;
}
