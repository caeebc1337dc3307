import type { FlowRun } from '@tda/contracts';
import type { AdvanceResult, RunPatch } from '@tda/flow-engine';
import type { StepDispatchError } from '../orchestrator.errors';
import type { DispatchedStep, DispatchRequest } from './step-dispatcher.service';

/** Why a run was written (the `cause` of its run_advanced line). */
export type WriteCause =
  | 'trigger'
  | 'step_event'
  | 'idempotent_replay'
  | 'cancel'
  | 'reconcile'
  | 'duplicate_trigger'
  | 'retry';

/**
 * What a step-ready publish failure after the write means, named once (README "How a run is
 * written"):
 * - `throw`: the error propagates; the step-event handler nacks and the redelivery republishes.
 * - `log`: the write is durable; `dispatch_failed` is logged and the reconciler republishes the
 *   READY steps that stay unclaimed (retry, cancel, queued runs that end, duplicates).
 * - `report`: the answer carries the failure (`dispatchFailure`) so the caller first accounts for
 *   the write, then records the failure (the reconciler's run entry, admission's failed start).
 */
export type DispatchPolicy = 'throw' | 'log' | 'report';

/**
 * A pure decision on the run as read. `write` with an empty patch counts as nothing to do.
 * `dispatch`: READY steps to publish step-ready for once the decision stands (after the write,
 * or on the run as read for a noop), with their reason.
 */
export type RunDecision<R> =
  | {
      kind: 'write';
      patch: RunPatch;
      result: R;
      /** Logged as run_advanced (with the cause) and counted when the patch was written. */
      advance?: AdvanceResult;
      dispatch?: readonly DispatchRequest[];
    }
  | { kind: 'noop'; reason: string; result: R; dispatch?: readonly DispatchRequest[] };

export type RunWriteOutcome<R> =
  | { kind: 'not_found' }
  | {
      kind: 'written' | 'noop';
      /** As written, or as read when there was nothing to write. */
      run: FlowRun;
      /** The `result` of the decision that stood (the last one, after conflicts). */
      result: R;
      dispatched: DispatchedStep[];
      /** `report` policy only: the publish failure (`dispatched` is then empty). */
      dispatchFailure?: StepDispatchError;
    };

export interface RunWriteLimits {
  /** Read-decide-write rounds before ConflictRetriesExhaustedError (default: updateWithRetry's). */
  maxAttempts?: number;
}
