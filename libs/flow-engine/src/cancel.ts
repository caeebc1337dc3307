import type { FlowRun, RunStatus } from '@tda/contracts';
import { withAdvance, type AdvanceResult } from './advance';
import type { RunPatch } from './patch';
import { isTerminalRunStatus } from './run-status';
import { toTimestamp } from './time';

export type CancelDecision =
  /** Write the patch: cancelRequestedAt, run CANCELLED, PENDING/READY steps CANCELLED. */
  | { kind: 'cancel'; patch: RunPatch; advance: AdvanceResult }
  /** Idempotent: nothing to write (already finished or already cancelled). */
  | { kind: 'noop'; reason: 'already_terminal'; runStatus: RunStatus };

/**
 * Cancel (DESIGN §5.5), idempotent: records cancelRequestedAt and applies it at once (one write):
 * the run becomes CANCELLED and its PENDING/READY steps CANCELLED; RUNNING steps learn it on
 * their next heartbeat and finalize CANCELLED themselves.
 */
export function requestCancel(run: FlowRun, now: Date): CancelDecision {
  if (isTerminalRunStatus(run.status)) {
    return { kind: 'noop', reason: 'already_terminal', runStatus: run.status };
  }
  const request: RunPatch =
    run.cancelRequestedAt === undefined ? { cancelRequestedAt: toTimestamp(now) } : {};
  const { patch, advance } = withAdvance(run, request, now);
  return { kind: 'cancel', patch, advance };
}
