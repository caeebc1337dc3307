import type { ArtifactStore } from '@tda/artifacts';
import { isTdaError, type FlowRun, type StepType, type Timeframe } from '@tda/contracts';
import {
  decideClaim,
  decideTakeover,
  describeNotExecutable,
  errorInfo,
  takeoverEligibility,
  type ClaimDecision,
  type TakeoverDecision,
} from '@tda/flow-engine';
import { InvalidRunDocumentError, type UpdateDecision, type VersionedRun } from '@tda/flow-store';
import { sanitizeForLog } from '@tda/observability';
import type { StepHarnessMetrics } from '../harness-metrics';
import type { StepHarnessPolicy } from '../harness-policy';
import type { HarnessLog } from './harness-log';
import { noopEnd, type ClaimedStep, type StepEnd, type StepTarget } from './step-end';
import type { StepWrites } from './step-writes';

export interface AdmissionOptions {
  stepType: StepType;
  owner: string;
  writes: StepWrites;
  artifacts: Pick<ArtifactStore, 'exists'>;
  policy: Pick<StepHarnessPolicy, 'leaseMs' | 'timeoutMs' | 'maxAttempts' | 'maxDeliveryAttempts'>;
  clock: () => Date;
  log: HarnessLog;
  /** The deterministic primary artifact of a step (the recovery check looks there). */
  primaryUri: (target: StepTarget, timeframe: Timeframe | undefined) => string;
  metrics?: StepHarnessMetrics;
}

/**
 * What admission decided: the step is ours to work on (`claimed`: executed after the recovery
 * check), a RUNNING step whose primary artifact already exists is to be finalized from it
 * (`recover`, takeover mode), or the delivery ends here.
 */
export type Admitted =
  | { kind: 'claimed'; claimed: ClaimedStep }
  | { kind: 'recover'; run: FlowRun; claimed: ClaimedStep; primaryUri: string }
  | { kind: 'end'; end: StepEnd };

/**
 * Admission (DESIGN.md §5.3 "executable? → claim"): the executable check and the claim in one
 * conditional write (flow-engine decideClaim, including its run-deadline rule), or for a RUNNING
 * step the takeover rules (seed 002 split-brain). A run document that cannot be read as a run
 * ends as FLOW_RUN_INVALID and is acked; a transient failure is thrown (nack) unless the message
 * was already delivered maxDeliveryAttempts times (then acked and logged: the reconciler
 * republishes a READY step that stays unclaimed with a fresh message).
 */
export class Admission {
  constructor(private readonly options: AdmissionOptions) {}

  async admit(target: StepTarget): Promise<Admitted> {
    try {
      return await this.claim(target);
    } catch (error) {
      if (error instanceof InvalidRunDocumentError) {
        return end({
          kind: 'invalid',
          reason: 'invalid_run_document',
          errorCode: 'FLOW_RUN_INVALID',
          issues: sanitizeForLog(error.issues.slice(0, 10)),
        });
      }
      const { deliveryAttempt } = target.meta;
      if (deliveryAttempt < this.options.policy.maxDeliveryAttempts) throw error;
      return end(
        noopEnd('delivery_attempts_exhausted', {
          deliveryAttempt,
          maxDeliveryAttempts: this.options.policy.maxDeliveryAttempts,
          errorCode: isTdaError(error) ? error.code : 'INTERNAL_ERROR',
          detail: 'acked before the claim; the reconciler republishes the step if it stays READY',
        }),
      );
    }
  }

  private async claim(target: StepTarget): Promise<Admitted> {
    let seen: FlowRun | undefined;
    const outcome = await this.options.writes.apply(
      'claim',
      target.runId,
      (run): UpdateDecision<ClaimDecision> => {
        seen = run;
        const decision = decideClaim(run, target.stepId, this.claimOptions());
        if (decision.kind === 'claim' || (decision.kind === 'invalid' && decision.patch)) {
          return { kind: 'write', patch: decision.patch ?? {}, result: decision };
        }
        return { kind: 'noop', reason: decision.kind, result: decision };
      },
    );
    if (outcome.kind === 'not_found') return end(noopEnd('run_not_found'));
    const decision = outcome.result;
    const claimed = outcome.kind === 'written' && decision.kind === 'claim';
    this.options.metrics?.stepClaims?.inc({
      stepType: this.options.stepType,
      result: claimed ? 'claimed' : 'noop',
    });
    if (outcome.kind === 'written') return this.afterWrite(target, outcome, decision);
    return this.notClaimed(target, decision, seen);
  }

  private afterWrite(target: StepTarget, written: VersionedRun, decision: ClaimDecision): Admitted {
    const step = written.run.steps[target.stepId];
    if (step === undefined) return end(noopEnd('unknown_step'));
    if (decision.kind === 'claim') {
      return { kind: 'claimed', claimed: claimedFrom(written, decision, 'claim', false) };
    }
    if (decision.kind === 'invalid') {
      // Unknown dependsOn: decideClaim's patch failed the step (INVALID_STEP_INPUTS, seed 002).
      return end({
        kind: 'report',
        status: 'FAILED',
        error: decision.error,
        attempt: step.attempt,
      });
    }
    return end(noopEnd('claim_superseded'));
  }

  private async notClaimed(
    target: StepTarget,
    decision: ClaimDecision,
    seen: FlowRun | undefined,
  ): Promise<Admitted> {
    switch (decision.kind) {
      case 'invalid':
        return end({ kind: 'invalid', reason: 'unsafe_step_id', errorCode: decision.error.code });
      case 'noop': {
        const { reason } = decision;
        if (reason.kind === 'already_running' && seen !== undefined)
          return this.onRunning(target, seen);
        if (reason.kind === 'already_running') return end(noopEnd('already_running'));
        return end(noopEnd(reason.kind, { detail: describeNotExecutable(reason) }));
      }
      case 'claim':
        // Unreachable: a claim decision is always written or superseded by a re-decision.
        return end(noopEnd('claim_superseded'));
    }
  }

  /**
   * The step is RUNNING. Held by a live lease of another worker → no-op. Otherwise (lease
   * expired, or our own orphan) look for the deterministic primary artifact: present → finalize
   * from it without executing (seed 002 split-brain); absent and ours → take over and execute
   * again; absent and expired → leave it to the reconciler (DESIGN.md §5.4 reclaims it).
   */
  private async onRunning(target: StepTarget, run: FlowRun): Promise<Admitted> {
    const eligibility = takeoverEligibility(run, target.stepId, {
      now: this.options.clock(),
      owner: this.options.owner,
    });
    if (!eligibility.eligible) {
      const { leaseOwner, leaseExpiresAt } = eligibility;
      return end(
        noopEnd('already_running', {
          ...(leaseOwner === undefined ? {} : { leaseOwner }),
          ...(leaseExpiresAt === undefined ? {} : { leaseExpiresAt }),
        }),
      );
    }
    const { step } = eligibility;
    const primaryUri = this.options.primaryUri(target, step.timeframe);
    if (await this.options.artifacts.exists(primaryUri)) {
      const claimed: ClaimedStep = {
        run,
        step,
        attempt: step.attempt,
        startedAt: step.outputs.execution?.timing?.startedAt ?? this.options.clock().toISOString(),
        via: 'takeover',
        runDeadlinePassed: false,
        artifactChecked: false,
      };
      return { kind: 'recover', run, claimed, primaryUri };
    }
    if (eligibility.why === 'own_orphan') return this.takeover(target, true);
    return end(
      noopEnd('lease_expired', { detail: 'left to the reconciler (reclaim or LEASE_EXPIRED)' }),
    );
  }

  /**
   * Our own orphan (or an artifact recovery refused): claim it again and execute — unless the
   * step already used policy.maxAttempts claims, then it fails RETRIES_EXHAUSTED (a loop of
   * redeliveries that keep re-executing one step is bounded by step.attempt).
   */
  async takeover(target: StepTarget, artifactChecked: boolean): Promise<Admitted> {
    let readAttempt = 0;
    const outcome = await this.options.writes.apply(
      'claim',
      target.runId,
      (run): UpdateDecision<TakeoverDecision> => {
        readAttempt = run.steps[target.stepId]?.attempt ?? 0;
        const decision = decideTakeover(run, target.stepId, this.claimOptions());
        return decision.kind === 'claim'
          ? { kind: 'write', patch: decision.patch, result: decision }
          : { kind: 'noop', reason: decision.reason, result: decision };
      },
    );
    if (outcome.kind === 'not_found') return end(noopEnd('run_not_found'));
    if (outcome.kind === 'noop' && outcome.reason === 'attempts_exhausted') {
      return end(this.exhausted(readAttempt));
    }
    if (outcome.kind === 'noop' || outcome.result.kind === 'noop') {
      return end(noopEnd(outcome.kind === 'noop' ? outcome.reason : 'takeover_not_possible'));
    }
    const step = outcome.run.steps[target.stepId];
    if (step === undefined) return end(noopEnd('unknown_step'));
    return {
      kind: 'claimed',
      claimed: claimedFrom(outcome, outcome.result, 'takeover', artifactChecked),
    };
  }

  private exhausted(attempt: number): StepEnd {
    const { maxAttempts } = this.options.policy;
    return {
      kind: 'finalize',
      mode: 'takeover',
      attempt,
      tries: 0,
      outcome: {
        status: 'FAILED',
        error: errorInfo(
          'RETRIES_EXHAUSTED',
          `step already claimed ${attempt} times (max ${maxAttempts})`,
          { attempt, maxAttempts },
        ),
        execution: { worker: this.options.owner },
      },
    };
  }

  private claimOptions() {
    const { policy } = this.options;
    return {
      now: this.options.clock(),
      owner: this.options.owner,
      leaseMs: policy.leaseMs,
      stepType: this.options.stepType,
      // the reconciler reads the effective policy from the document
      timeoutMs: policy.timeoutMs,
      maxAttempts: policy.maxAttempts,
    };
  }
}

function end(stepEnd: StepEnd): Admitted {
  return { kind: 'end', end: stepEnd };
}

function claimedFrom(
  { run, version }: VersionedRun,
  decision: Extract<ClaimDecision, { kind: 'claim' }>,
  via: 'claim' | 'takeover',
  artifactChecked: boolean,
): ClaimedStep {
  const step = run.steps[decision.stepId];
  if (step === undefined) throw new Error(`claimed step ${decision.stepId} is not in the run`);
  return {
    run,
    version,
    step,
    attempt: decision.attempt,
    startedAt: decision.startedAt,
    via,
    ...(decision.runDeadlineMs === undefined ? {} : { runDeadlineMs: decision.runDeadlineMs }),
    runDeadlinePassed: decision.runDeadlinePassed,
    artifactChecked,
  };
}
