import type { FlowRun, FlowStep } from '@tda/contracts';
import { decideClaim, type ClaimDecision } from './claim';
import { decideFinalize, type FinalizeDecision, type FinalizeOutcome } from './finalize';
import { applyPatch, stepPath } from './patch';
import { stepOf } from './step-lookup';
import { isAtOrBefore, timestampMs } from './time';

/**
 * Pure decisions for taking over a RUNNING step whose previous attempt is gone (seed 002
 * split-brain: "output written but Firestore update failed"). flow-engine's decideClaim only
 * claims READY steps and decideFinalize only lets the lease owner finish, so these compose them
 * with one extra rule, and every write stays one conditional update (read → decide → write with
 * the read's version): if the holder heartbeats between our read and our write, the version
 * changes, we re-read, and the lease is valid again → no takeover.
 *
 * A RUNNING step may be taken over when its lease has expired (or it has none), or when the
 * lease names this very worker but no execution of it is running in this process (our own
 * orphan: the process restarted, or an earlier delivery's finalize write failed and was nacked).
 */
export type TakeoverEligibility =
  | { eligible: true; step: FlowStep; why: 'lease_expired' | 'own_orphan' }
  | {
      eligible: false;
      reason: 'unknown_step' | 'not_running' | 'lease_held';
      leaseOwner?: string;
      leaseExpiresAt?: string;
    };

export interface TakeoverOptions {
  now: Date;
  owner: string;
  leaseMs: number;
  /** Recorded as the claim records it (steps.<id>.deadlineAt = now + timeoutMs). */
  timeoutMs?: number;
  /**
   * The worker's StepPolicy.maxAttempts: a step already at it is not executed again (noop
   * `attempts_exhausted`; the caller finalizes it FAILED RETRIES_EXHAUSTED), so a loop of
   * redeliveries that keep taking over the same step is bounded by step.attempt.
   */
  maxAttempts?: number;
}

export function takeoverEligibility(
  run: FlowRun,
  stepId: string,
  options: Pick<TakeoverOptions, 'now' | 'owner'>,
): TakeoverEligibility {
  const step = stepOf(run, stepId);
  if (step === undefined) return { eligible: false, reason: 'unknown_step' };
  if (step.status !== 'RUNNING') return { eligible: false, reason: 'not_running' };
  const { lease } = step;
  if (lease === undefined) return { eligible: true, step, why: 'lease_expired' };
  if (lease.owner === options.owner) return { eligible: true, step, why: 'own_orphan' };
  if (timestampMs(lease.expiresAt) === undefined || isAtOrBefore(lease.expiresAt, options.now)) {
    return { eligible: true, step, why: 'lease_expired' };
  }
  return {
    eligible: false,
    reason: 'lease_held',
    leaseOwner: lease.owner,
    leaseExpiresAt: lease.expiresAt,
  };
}

export type TakeoverDecision =
  | (Extract<ClaimDecision, { kind: 'claim' }> & { why: 'lease_expired' | 'own_orphan' })
  | { kind: 'noop'; stepId: string; reason: string };

/**
 * RUNNING → RUNNING under a new lease for re-execution: exactly what decideClaim would write for
 * the step were it READY (attempt + 1, fresh lease and timing, previous error/progress removed),
 * so the same executability rules apply (dependencies SUCCEEDED, run RUNNING, no cancel).
 */
export function decideTakeover(
  run: FlowRun,
  stepId: string,
  options: TakeoverOptions,
): TakeoverDecision {
  const eligibility = takeoverEligibility(run, stepId, options);
  if (!eligibility.eligible) return { kind: 'noop', stepId, reason: eligibility.reason };
  if (options.maxAttempts !== undefined && eligibility.step.attempt >= options.maxAttempts) {
    return { kind: 'noop', stepId, reason: 'attempts_exhausted' };
  }
  const asReady = applyPatch(run, { [stepPath(stepId, 'status')]: 'READY' });
  const claim = decideClaim(asReady, stepId, {
    now: options.now,
    owner: options.owner,
    leaseMs: options.leaseMs,
    stepType: eligibility.step.stepType,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }),
  });
  if (claim.kind !== 'claim') {
    const reason = claim.kind === 'noop' ? claim.reason.kind : claim.error.code;
    return { kind: 'noop', stepId, reason };
  }
  return { ...claim, why: eligibility.why };
}

/**
 * RUNNING → final for a step taken over from an expired or orphaned lease, in ONE conditional
 * write (no separate lease write): decideFinalize on the run as it would be had we taken the
 * lease. attempt is not incremented: nothing is executed again.
 */
export function decideTakeoverFinalize(
  run: FlowRun,
  stepId: string,
  options: { now: Date; owner: string; outcome: FinalizeOutcome },
): FinalizeDecision {
  const eligibility = takeoverEligibility(run, stepId, options);
  if (!eligibility.eligible) {
    if (eligibility.reason === 'unknown_step') {
      return { kind: 'noop', stepId, reason: { kind: 'unknown_step' } };
    }
    const step = stepOf(run, stepId);
    if (eligibility.reason === 'not_running' && step !== undefined) {
      return decideFinalize(run, stepId, options);
    }
    return {
      kind: 'noop',
      stepId,
      reason:
        eligibility.leaseOwner === undefined
          ? { kind: 'lease_lost' }
          : { kind: 'lease_lost', leaseOwner: eligibility.leaseOwner },
    };
  }
  const asOwner = applyPatch(run, {
    [stepPath(stepId, 'lease')]: { owner: options.owner, expiresAt: options.now.toISOString() },
  });
  return decideFinalize(asOwner, stepId, options);
}
