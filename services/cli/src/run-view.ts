import type { FlowRun, FlowStep } from '@tda/contracts';
import { RunGraphInvalidError, reusedFromOf, topologicalOrder } from '@tda/flow-engine';

const TERMINAL_RUN = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);

export function isTerminalRun(run: FlowRun): boolean {
  return TERMINAL_RUN.has(run.status);
}

const ICONS: Record<FlowStep['status'], string> = {
  PENDING: '·',
  READY: '○',
  RUNNING: '◐',
  SUCCEEDED: '✔',
  FAILED: '✖',
  SKIPPED: '↷',
  CANCELLED: '⊘',
};

function bar(done: number, total: number, width = 24): string {
  const filled = total === 0 ? 0 : Math.round((done / total) * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
}

function seconds(from: string | undefined, to: string | undefined, now: Date): string {
  if (from === undefined) return '';
  const end = to === undefined ? now.getTime() : Date.parse(to);
  return `${((end - Date.parse(from)) / 1000).toFixed(1)}s`;
}

/**
 * The steps in DAG order: every step after its dependencies, ties by stepId (flow-engine
 * topologicalOrder, the order `tda report` uses). A run document whose graph is broken (a cycle,
 * an unknown dependency) is still shown, in stepId order: the view must not hide it.
 */
export function stepsInDagOrder(run: FlowRun): string[] {
  try {
    return topologicalOrder(run.steps);
  } catch (error) {
    if (error instanceof RunGraphInvalidError) return Object.keys(run.steps).sort();
    throw error;
  }
}

/**
 * A step's time column: its duration, or "reused" for a step a rerun copied from an earlier run
 * (outputs.execution.reusedFrom): its timing is the source run's, and this run's finishedAt is
 * the rerun's creation, so any duration would be made up.
 */
function stepTiming(step: FlowStep, now: Date): string {
  if (reusedFromOf(step) !== undefined) return 'reused';
  return seconds(step.outputs.execution?.timing?.startedAt, step.finishedAt, now);
}

/**
 * A terminal view of a run: header with status and a progress bar, one line per step in DAG
 * order, the step error when failed.
 */
export function renderRun(run: FlowRun, now: Date = new Date()): string[] {
  const ids = stepsInDagOrder(run);
  const steps = ids.map((id) => [id, run.steps[id]] as const);
  const finished = steps.filter(([, s]) =>
    ['SUCCEEDED', 'FAILED', 'SKIPPED', 'CANCELLED'].includes(s?.status ?? ''),
  ).length;
  const width = Math.max(...ids.map((id) => id.length), 10);
  const lines = [
    `${run.runId}  ${run.flowKey}  ${run.scope.symbol}`,
    `status ${run.status.padEnd(9)} ${bar(finished, ids.length)} ${finished}/${ids.length} steps  ${seconds(run.createdAt, run.finishedAt, now)}`,
  ];
  for (const [id, step] of steps) {
    if (step === undefined) continue;
    const attempt = step.attempt > 1 ? ` attempt ${step.attempt}` : '';
    // Flow 5: a step the run added at run time says which step asked for it.
    const added = step.addedBy === undefined ? '' : `  + added by ${step.addedBy.stepId}`;
    lines.push(
      `  ${ICONS[step.status]} ${id.padEnd(width)}  ${step.status.padEnd(9)} ${stepTiming(step, now)}${attempt}${added}`,
    );
    if (step.error !== undefined && step.status !== 'CANCELLED') {
      lines.push(`      ${step.error.code}: ${step.error.message}`);
    }
  }
  if (run.error !== undefined) lines.push(`run error ${run.error.code}: ${run.error.message}`);
  return lines;
}

/** gs:// URIs of every artifact a run produced (primary outputs and manifests), by step in DAG order. */
export function artifactUris(run: FlowRun): { stepId: string; uri: string }[] {
  const uris: { stepId: string; uri: string }[] = [];
  for (const id of stepsInDagOrder(run)) {
    const outputs = run.steps[id]?.outputs;
    if (outputs?.gcs_uri !== undefined) uris.push({ stepId: id, uri: outputs.gcs_uri });
  }
  return uris;
}
