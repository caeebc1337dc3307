/** The part of a step the DAG needs. */
export interface DagStep {
  dependsOn: readonly string[];
}

/**
 * Step ids in dependency order (Kahn): every step after the steps it depends on; ties keep the
 * run document's order so the graph and the timeline read the same way on every load. Unknown
 * dependencies are ignored; steps on a cycle (never in a valid run) go last, in document order.
 */
export function topologicalOrder(steps: Readonly<Record<string, DagStep>>): string[] {
  const ids = Object.keys(steps);
  const remaining = new Map(
    ids.map((id) => [id, (steps[id]?.dependsOn ?? []).filter((dep) => dep in steps).length]),
  );
  const dependents = new Map<string, string[]>(ids.map((id) => [id, []]));
  for (const id of ids) {
    for (const dep of steps[id]?.dependsOn ?? []) dependents.get(dep)?.push(id);
  }
  const order: string[] = [];
  let frontier = ids.filter((id) => remaining.get(id) === 0);
  while (frontier.length > 0) {
    order.push(...frontier);
    const next: string[] = [];
    for (const id of frontier) {
      for (const child of dependents.get(id) ?? []) {
        const left = (remaining.get(child) ?? 0) - 1;
        remaining.set(child, left);
        if (left === 0) next.push(child);
      }
    }
    frontier = ids.filter((id) => next.includes(id));
  }
  return [...order, ...ids.filter((id) => !order.includes(id))];
}

/** Every step that transitively depends on `stepId` (what a rerun from it executes again). */
export function downstreamOf(steps: Readonly<Record<string, DagStep>>, stepId: string): string[] {
  const found = new Set<string>();
  const visit = (id: string): void => {
    for (const [other, step] of Object.entries(steps)) {
      if (step.dependsOn.includes(id) && !found.has(other)) {
        found.add(other);
        visit(other);
      }
    }
  };
  visit(stepId);
  return topologicalOrder(steps).filter((id) => found.has(id));
}
