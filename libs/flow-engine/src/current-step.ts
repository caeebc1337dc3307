import type { FlowRun, StepStatus } from '@tda/contracts';
import { analyseGraph } from './graph-analysis';

/** The steps in DAG order; id order when the graph is invalid (the run fails on it anyway). */
function dagOrder(steps: FlowRun['steps']): readonly string[] {
  return analyseGraph(steps).order ?? Object.keys(steps).sort();
}

/**
 * seed 004 `current_step`: what the run is doing now, or where it stopped. The first RUNNING step
 * in DAG order (ties by stepId); else the first FAILED one (where it stopped); else the first
 * READY one (next to run); else the SUCCEEDED step that finished last (a finished run: its last
 * step). `statuses` are the ones the current decision leaves (they may differ from run.steps);
 * only worker-written finish times count, so advancing again gives the same answer.
 */
export function currentStepOf(
  run: Pick<FlowRun, 'steps'>,
  statuses: ReadonlyMap<string, StepStatus>,
): string | undefined {
  const order = dagOrder(run.steps);
  for (const wanted of ['RUNNING', 'FAILED', 'READY'] as const) {
    const found = order.find((id) => statuses.get(id) === wanted);
    if (found !== undefined) return found;
  }
  let last: { id: string; at: string } | undefined;
  for (const id of order) {
    if (statuses.get(id) !== 'SUCCEEDED') continue;
    const at = run.steps[id]?.finishedAt;
    if (at !== undefined && (last === undefined || at >= last.at)) last = { id, at };
  }
  return last?.id;
}
