import type { RunStatus, StepStatus } from '../api/api-types';

/**
 * One colour vocabulary for statuses, shared by the badges, the DAG nodes and the timeline bars
 * (CSS classes `tone-<tone>`, light and dark). A run and a step in the same state look the same.
 */
export type Tone = 'idle' | 'ready' | 'active' | 'success' | 'danger' | 'stopped' | 'skipped';

const STEP_TONES: Readonly<Record<StepStatus, Tone>> = {
  PENDING: 'idle',
  READY: 'ready',
  RUNNING: 'active',
  SUCCEEDED: 'success',
  FAILED: 'danger',
  CANCELLED: 'stopped',
  SKIPPED: 'skipped',
};

const RUN_TONES: Readonly<Record<RunStatus, Tone>> = {
  PENDING: 'idle',
  RUNNING: 'active',
  SUCCEEDED: 'success',
  FAILED: 'danger',
  CANCELLED: 'stopped',
};

/** Words people read next to the colour (never colour alone). PENDING runs wait in the queue. */
const RUN_LABELS: Readonly<Record<RunStatus, string>> = {
  PENDING: 'Queued',
  RUNNING: 'Running',
  SUCCEEDED: 'Succeeded',
  FAILED: 'Failed',
  CANCELLED: 'Cancelled',
};

const STEP_LABELS: Readonly<Record<StepStatus, string>> = {
  PENDING: 'Pending',
  READY: 'Ready',
  RUNNING: 'Running',
  SUCCEEDED: 'Succeeded',
  FAILED: 'Failed',
  CANCELLED: 'Cancelled',
  SKIPPED: 'Skipped',
};

export const RUN_STATUS_OPTIONS = Object.keys(RUN_TONES) as RunStatus[];

export function runTone(status: RunStatus): Tone {
  return RUN_TONES[status];
}

export function stepTone(status: StepStatus): Tone {
  return STEP_TONES[status];
}

export function runStatusLabel(status: RunStatus): string {
  return RUN_LABELS[status];
}

export function stepStatusLabel(status: StepStatus): string {
  return STEP_LABELS[status];
}

/** SUCCEEDED, FAILED, CANCELLED: nothing will change any more; stop streaming and polling. */
export function isTerminalRun(status: RunStatus): boolean {
  return status === 'SUCCEEDED' || status === 'FAILED' || status === 'CANCELLED';
}

export function isTerminalStep(status: StepStatus): boolean {
  return (
    status === 'SUCCEEDED' || status === 'FAILED' || status === 'CANCELLED' || status === 'SKIPPED'
  );
}
