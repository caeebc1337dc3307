import type { FlowRun } from '@tda/contracts';
import { advance, type AdvanceResult } from '@tda/flow-engine';
import type { RunDecision } from './run-decision.types';
import type { DispatchRequest } from './step-dispatcher.service';

/**
 * DESIGN §5.2 as a RunWriter decision: the pure advance, its newly READY steps dispatched with
 * reason `advance`, then `republish` (READY steps to publish again, reason `retry`: a redelivered
 * step event's first delivery may have written the advance and then failed to publish).
 * Steps that are not READY in the run as written are dropped by the dispatcher.
 */
export function advanceDecision(
  run: FlowRun,
  now: Date,
  republish: readonly string[] = [],
): RunDecision<AdvanceResult> {
  const decision = advance(run, now);
  const dispatch: DispatchRequest[] = decision.newlyReady.map((stepId) => ({
    stepId,
    reason: 'advance',
  }));
  for (const stepId of republish) {
    if (!decision.newlyReady.includes(stepId)) dispatch.push({ stepId, reason: 'retry' });
  }
  return {
    kind: 'write',
    patch: decision.patch,
    result: decision,
    advance: decision,
    dispatch,
  };
}
