import type { FlowRun } from '@tda/contracts';
import { decideRetry, failedStepIds, type RetryDecision } from '@tda/flow-engine';
import type { RunDecision } from '../dispatch/run-decision.types';

/** What one retry request resolved to. */
export type RetryResult = RetryDecision | { kind: 'no_failed_steps' };

/**
 * Retry as a RunWriter decision: `stepId`, or every FAILED step when none is named, re-opened by
 * flow-engine decideRetry in one write (the advance merged in); its newly READY steps are
 * dispatched with reason `retry`. Everything else is a noop the caller answers from.
 */
export function retryDecision(
  run: FlowRun,
  now: Date,
  stepId: string | undefined,
): RunDecision<RetryResult> {
  const stepIds = stepId === undefined ? failedStepIds(run) : [stepId];
  if (stepIds.length === 0) {
    return { kind: 'noop', reason: 'no_failed_steps', result: { kind: 'no_failed_steps' } };
  }
  const decision = decideRetry(run, stepIds, { now });
  if (decision.kind !== 'retry') return { kind: 'noop', reason: decision.kind, result: decision };
  return {
    kind: 'write',
    patch: decision.patch,
    result: decision,
    advance: decision.advance,
    dispatch: decision.advance.newlyReady.map((id) => ({ stepId: id, reason: 'retry' })),
  };
}
