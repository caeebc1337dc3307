import type { FlowRun } from '@tda/contracts';
import { decideQueuedRun, type AdvanceResult } from '@tda/flow-engine';
import { advanceDecision } from '../dispatch/advance.decision';
import type { RunDecision } from '../dispatch/run-decision.types';

/**
 * Starting an admitted run: the PENDING -> RUNNING advance (first steps READY and dispatched),
 * only while the run is still PENDING (another instance may have started or ended it).
 */
export function startQueuedRunDecision(
  run: FlowRun,
  now: Date,
): RunDecision<AdvanceResult | undefined> {
  if (run.status !== 'PENDING') return { kind: 'noop', reason: 'not_queued', result: undefined };
  return advanceDecision(run, now);
}

/** Ending a queued run that must not wait (cancel requested, deadline passed, unusable graph). */
export function endQueuedRunDecision(
  run: FlowRun,
  now: Date,
): RunDecision<AdvanceResult | undefined> {
  const decision = decideQueuedRun(run, now);
  return decision.kind === 'end'
    ? {
        kind: 'write',
        patch: decision.advance.patch,
        result: decision.advance,
        advance: decision.advance,
      }
    : { kind: 'noop', reason: decision.kind, result: undefined };
}
