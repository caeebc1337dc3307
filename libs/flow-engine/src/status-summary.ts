import type { FlowRun, RunStatus, RunStatusSummary } from '@tda/contracts';
import { computeProgress } from './run-status';

/** seed 004's lifecycle words for TDA's run statuses (documented once, README "Run status"). */
export const SEED_LIFECYCLE: Readonly<Record<RunStatus, RunStatusSummary['status']>> = {
  PENDING: 'queued',
  RUNNING: 'running',
  SUCCEEDED: 'completed',
  FAILED: 'failed',
  CANCELLED: 'cancelled',
};

/**
 * GET /runs/{runId}/status (seed 004 status.json) from the run document alone: the lifecycle
 * word, timestamps, `current_step` (progress.currentStepId, recomputed when an older document
 * lacks it), step counts and the error as `CODE: message`. Pure, so equal runs give equal bytes
 * (the ETag).
 */
export function runStatusSummary(run: FlowRun): RunStatusSummary {
  const progress = run.progress?.currentStepId === undefined ? computeProgress(run) : run.progress;
  const statuses = Object.values(run.steps).map((s) => s.status);
  return {
    run_id: run.runId,
    flow_key: run.flowKey,
    status: SEED_LIFECYCLE[run.status],
    run_status: run.status,
    trigger: run.trigger.type.toLowerCase() as RunStatusSummary['trigger'],
    started_at: run.startedAt ?? null,
    finished_at: run.finishedAt ?? null,
    current_step: progress.currentStepId ?? null,
    steps_total: statuses.length,
    steps_completed: statuses.filter((s) => s === 'SUCCEEDED' || s === 'SKIPPED').length,
    error: run.error === undefined ? null : `${run.error.code}: ${run.error.message}`,
  };
}
