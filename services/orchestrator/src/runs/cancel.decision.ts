import type { FlowRun } from '@tda/contracts';
import { requestCancel } from '@tda/flow-engine';
import type { RunDecision } from '../dispatch/run-decision.types';

/**
 * DESIGN §5.5 as a RunWriter decision: cancelRequestedAt, run CANCELLED and PENDING/READY steps
 * CANCELLED in one write; nothing to do for a finished or already cancelled run.
 */
export function cancelDecision(run: FlowRun, now: Date): RunDecision<undefined> {
  const decision = requestCancel(run, now);
  return decision.kind === 'noop'
    ? { kind: 'noop', reason: decision.reason, result: undefined }
    : { kind: 'write', patch: decision.patch, result: undefined, advance: decision.advance };
}
