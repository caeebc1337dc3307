import type { RunStatus, StepStatus } from '../api/api-types';
import { runStatusLabel, runTone, stepStatusLabel, stepTone } from '../model/status';

export function RunStatusBadge({ status }: { status: RunStatus }) {
  return (
    <span className={`badge tone-${runTone(status)}`}>
      <span className="badge-dot" aria-hidden="true" />
      {runStatusLabel(status)}
    </span>
  );
}

export function StepStatusBadge({ status }: { status: StepStatus }) {
  return (
    <span className={`badge tone-${stepTone(status)}`}>
      <span className="badge-dot" aria-hidden="true" />
      {stepStatusLabel(status)}
    </span>
  );
}
