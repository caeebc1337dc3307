import type { FlowRun, RunStatus } from '@tda/contracts';
import {
  reconcileEndedRun,
  reconcileRun,
  type ReconcileOptions,
  type ReconcileResult,
} from '@tda/flow-engine';
import type { OrchestratorConfig } from '../config';
import type { RunDecision } from '../dispatch/run-decision.types';

/** RUNNING runs get the full reconcile; ended runs only have dead workers' steps closed. */
export type ReconcileScope = 'active' | 'ended';

export type ReconcileConfig = Pick<
  OrchestratorConfig,
  'TDA_READY_REPUBLISH_AFTER_MS' | 'TDA_STEP_TIMEOUT_GRACE_MS' | 'TDA_MAX_STEP_ATTEMPTS'
>;

/** What the reconciler's write decided, and the run's status as read (the report's status). */
export interface ReconciledRun {
  decision: ReconcileResult;
  readStatus: RunStatus;
}

export function reconcileOptions(config: ReconcileConfig, now: Date): ReconcileOptions {
  return {
    now,
    republishReadyAfterMs: config.TDA_READY_REPUBLISH_AFTER_MS,
    stepTimeoutGraceMs: config.TDA_STEP_TIMEOUT_GRACE_MS,
    ...(config.TDA_MAX_STEP_ATTEMPTS === undefined
      ? {}
      : { maxAttempts: config.TDA_MAX_STEP_ATTEMPTS }),
  };
}

/** The pure reconcile decision of a run in `scope` (also what a dry run reports). */
export function decideReconcile(
  run: FlowRun,
  options: ReconcileOptions,
  scope: ReconcileScope,
): ReconcileResult {
  return scope === 'ended' ? reconcileEndedRun(run, options) : reconcileRun(run, options);
}

/**
 * DESIGN §5.4 as a RunWriter decision: at most one write, then step-ready for every step to
 * republish (reason `advance` for the newly READY ones, `reconcile` for stale and reclaimed ones),
 * also when there is nothing to write.
 */
export function reconcileDecision(
  run: FlowRun,
  options: ReconcileOptions,
  scope: ReconcileScope,
): RunDecision<ReconciledRun> {
  const decision = decideReconcile(run, options, scope);
  const fresh = new Set(decision.advance.newlyReady);
  return {
    kind: 'write',
    patch: decision.patch,
    result: { decision, readStatus: run.status },
    // Closing a dead worker's step in an ended run is not an advance of the run.
    ...(scope === 'active' ? { advance: decision.advance } : {}),
    dispatch: decision.republish.map((stepId) => ({
      stepId,
      reason: fresh.has(stepId) ? 'advance' : 'reconcile',
    })),
  };
}
