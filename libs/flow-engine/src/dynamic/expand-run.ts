import type { ErrorInfo, FlowRun } from '@tda/contracts';
import { applyPatch, mergePatches, sortedSteps, type RunPatch } from '../patch';
import { isTerminalRunStatus } from '../run-status';
import { expandIndicatorRequests } from './expand-indicators';

/** What advance does about the indicator requests of a run's finished steps. */
export type RunExpansion =
  | { kind: 'none' }
  /** Dynamic steps to insert (PENDING) before the run advances. */
  | { kind: 'expand'; patch: RunPatch; added: string[] }
  /** A request the run cannot honour: the run fails with this error. */
  | { kind: 'refused'; stepId: string; error: ErrorInfo };

/**
 * Flow 5, part of advance: every SUCCEEDED step whose outputs carry `indicatorRequests` is
 * expanded once (ids derive from the step and the request, so a request already expanded is a
 * noop). Only runs created with `expansionLimits` (a flow with dynamic steps) expand; a
 * cancelled or finished run never grows.
 */
export function expandRequestedSteps(run: FlowRun, now: Date): RunExpansion {
  const limits = run.expansionLimits;
  if (limits === undefined || run.cancelRequestedAt !== undefined) return { kind: 'none' };
  if (isTerminalRunStatus(run.status)) return { kind: 'none' };
  let current = run;
  const patches: RunPatch[] = [];
  const added: string[] = [];
  for (const [stepId, step] of sortedSteps(run)) {
    const requests = step.outputs.indicatorRequests;
    if (step.status !== 'SUCCEEDED' || requests === undefined) continue;
    const decision = expandIndicatorRequests(current, stepId, requests, now, limits);
    if (decision.kind === 'noop') continue;
    if (decision.kind === 'refused') return { kind: 'refused', stepId, error: decision.error };
    current = applyPatch(current, decision.patch);
    patches.push(decision.patch);
    added.push(...decision.added);
  }
  return added.length === 0
    ? { kind: 'none' }
    : { kind: 'expand', patch: mergePatches(...patches), added };
}
