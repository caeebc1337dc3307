import type { FlowRun } from '@tda/contracts';
import { advance, type AdvanceResult } from './advance';
import { decideLeaseExpiry } from './lease';
import { applyPatch, mergePatches, sortedSteps, type RunPatch } from './patch';
import { timestampMs, toTimestamp } from './time';

export interface ReconcileOptions {
  now: Date;
  /** Claims allowed per step before an expired lease fails it (seed 004: 3). */
  maxAttempts: number;
  /** READY steps not claimed for this long get their step-ready message published again. */
  republishReadyAfterMs: number;
}

export interface ReconcileResult {
  /** Lease-expiry decisions plus the advance they imply, as one conditional write. */
  patch: RunPatch;
  /** Publish a step-ready message for each: stale READY, reclaimed and newly READY steps. */
  republish: string[];
  reclaimed: string[];
  failed: string[];
  cancelled: string[];
  advance: AdvanceResult;
}

/**
 * The reconciler's pass over one run (DESIGN §5.4), pure: RUNNING steps whose lease expired are
 * reclaimed / failed / cancelled (decideLeaseExpiry), READY steps older than the threshold are
 * republished (a lost message must not stall a run), and the run is advanced (deadline, failure
 * policy, new READY steps). Nothing to do -> empty patch and nothing to republish.
 */
export function reconcileRun(run: FlowRun, options: ReconcileOptions): ReconcileResult {
  toTimestamp(options.now);
  const patches: RunPatch[] = [];
  const reclaimed: string[] = [];
  const failed: string[] = [];
  const cancelled: string[] = [];
  const stale: string[] = [];
  const cutoff = options.now.getTime() - options.republishReadyAfterMs;
  for (const [stepId, step] of sortedSteps(run)) {
    if (step.status === 'READY') {
      const readyMs = timestampMs(step.readyAt);
      if (readyMs === undefined || readyMs <= cutoff) stale.push(stepId);
      continue;
    }
    const decision = decideLeaseExpiry(run, stepId, options);
    if (decision.kind === 'none') continue;
    patches.push(decision.patch);
    if (decision.kind === 'reclaim') reclaimed.push(stepId);
    else if (decision.kind === 'fail') failed.push(stepId);
    else cancelled.push(stepId);
  }
  const expiries = mergePatches(...patches);
  const next = advance(applyPatch(run, expiries), options.now);
  const patch = mergePatches(expiries, next.patch);
  const after = applyPatch(run, patch);
  // only steps that are (still) READY after this write are worth a message
  const republish = [...new Set([...stale, ...reclaimed, ...next.newlyReady])]
    .filter((id) => after.steps[id]?.status === 'READY')
    .sort();
  return { patch, republish, reclaimed, failed, cancelled, advance: next };
}
