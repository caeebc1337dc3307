import { isTdaError, type StepExecution } from '@tda/contracts';
import { producingRunId } from '@tda/flow-engine';
import { settleOrAbort } from '../abortable';
import { writeStepArtifacts } from '../artifact-writer';
import { HarnessShutdownError } from '../harness.errors';
import { callRecover, type ExistingArtifact, type StepResult } from '../step-handler';
import type { HarnessIo } from './harness-io';
import type { HarnessLog } from './harness-log';
import { finalizeOutcome } from './outcomes';
import { checkStepInputs, buildStepContext } from './step-context';
import { StepBudget } from './step-budget';
import {
  noopEnd,
  type ClaimedStep,
  type FinalizeMode,
  type StepEnd,
  type StepTarget,
} from './step-end';

export interface RecoveryOptions extends HarnessIo {
  /** A recover() gets the step timeout, like an execution. */
  timeoutMs: number;
  /** The redelivery bound: a recover() still failing at it stops being retried by nacks. */
  maxDeliveryAttempts: number;
  log: HarnessLog;
}

/**
 * The recovery check (DESIGN.md §5.3, seed 002 split-brain): the step's deterministic primary
 * artifact exists, written by an attempt that crashed before its finalize. When it is a valid
 * artifact of the step type and belongs to this run and step, the step is finalized from it
 * without executing (handler.recover may add outputs and execution metadata, or refuse with
 * null); otherwise it is executed again, and different bytes become an artifact conflict.
 */
export class Recovery {
  constructor(private readonly options: RecoveryOptions) {}

  async recover(
    target: StepTarget,
    claimed: ClaimedStep,
    primaryUri: string,
    mode: FinalizeMode,
  ): Promise<StepEnd | 'execute'> {
    const existing = await this.readOwn(target, claimed, primaryUri);
    if (existing === undefined) return 'execute';
    let result: StepResult = { artifacts: [], primaryUri };
    let via: 'handler' | 'artifact' = 'artifact';
    if (this.options.handler.recover !== undefined) {
      const recovered = await this.viaHandler(target, claimed, existing);
      if (recovered === 'execute' || 'kind' in recovered) return recovered;
      result = recovered;
      via = 'handler';
    }
    const base: StepExecution = {
      ...(claimed.via === 'claim' ? { timing: { startedAt: claimed.startedAt } } : {}),
      worker: this.options.owner,
      recoveredFromArtifact: true,
    };
    const written = await writeStepArtifacts(result, this.options.writer);
    if (written.kind === 'aborted') return noopEnd('recovery_aborted');
    return {
      kind: 'finalize',
      mode,
      attempt: claimed.attempt,
      recoveredVia: via,
      outcome:
        written.kind === 'failed'
          ? { status: 'FAILED', error: written.error, execution: base }
          : finalizeOutcome(result, written.primary, base, this.options.owner),
    };
  }

  /** The existing primary artifact when it is this step's valid artifact, else undefined. */
  private async readOwn(
    target: StepTarget,
    claimed: ClaimedStep,
    uri: string,
  ): Promise<ExistingArtifact<unknown> | undefined> {
    const { descriptor } = this.options.handler;
    let bytes: Buffer;
    try {
      bytes = await this.options.artifacts.read(uri);
    } catch {
      return undefined; // vanished or unreadable now: executing writes it again
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(bytes.toString('utf8'));
    } catch {
      return undefined;
    }
    const checked = descriptor.artifact.validate(parsed);
    if (!checked.ok) return undefined;
    const identity = descriptor.artifact.identity(checked.value);
    const runId = producingRunId(claimed.run, target.stepId);
    if (identity.runId !== runId || identity.stepId !== target.stepId) return undefined;
    return { uri, artifact: checked.value, bytes };
  }

  /** handler.recover within the step timeout; null → execute; a failure propagates (nack). */
  private async viaHandler(
    target: StepTarget,
    claimed: ClaimedStep,
    existing: ExistingArtifact<unknown>,
  ): Promise<StepResult | StepEnd | 'execute'> {
    const { handler, clock } = this.options;
    const inputs = checkStepInputs(handler.descriptor, claimed.run, target.stepId, claimed.step);
    // Inputs that no longer validate cannot drive handler.recover; the artifact still can.
    if (!inputs.ok) return { artifacts: [], primaryUri: existing.uri };
    const budget = new StepBudget({
      deadline: new Date(clock().getTime() + this.options.timeoutMs),
      clock,
      live: this.options.live,
    });
    try {
      const context = buildStepContext({
        descriptor: handler.descriptor,
        run: claimed.run,
        stepId: target.stepId,
        step: claimed.step,
        attempt: claimed.attempt,
        checked: inputs,
        budget,
        artifacts: this.options.artifacts,
        registry: this.options.registry,
        owner: this.options.owner,
        checkpoints: this.options.checkpoints,
        artifactUri: this.options.artifactUri(target, claimed.step.timeframe),
        clock,
      });
      const settled = await settleOrAbort(
        () => callRecover(handler, existing, context) ?? Promise.resolve(null),
        budget.signal,
      );
      if (settled.kind === 'aborted') {
        if (settled.reason.kind === 'shutdown') throw new HarnessShutdownError();
        return noopEnd('recovery_aborted', { abort: settled.reason.kind });
      }
      if (settled.kind === 'error') return this.afterFailure(target, settled.error);
      return settled.value ?? 'execute';
    } finally {
      await budget.stop();
    }
  }

  /**
   * A recover() that threw. A transient failure (the artifact cannot be read right now) is
   * nacked for a redelivery to try again, but only within the redelivery bound; a decided refusal
   * (a non-retryable TdaError, e.g. inputs the artifact cannot satisfy) and a failure at the bound
   * execute the step instead, which records the outcome (its own error, or RETRIES_EXHAUSTED).
   */
  private afterFailure(target: StepTarget, error: unknown): 'execute' {
    const refused = isTdaError(error) && !error.retryable;
    const exhausted = target.meta.deliveryAttempt >= this.options.maxDeliveryAttempts;
    if (!refused && !exhausted) throw error;
    this.options.log.warn('step_recovery_refused', {
      reason: refused ? 'handler_refused' : 'delivery_attempts_exhausted',
      errorCode: isTdaError(error) ? error.code : 'INTERNAL_ERROR',
      deliveryAttempt: target.meta.deliveryAttempt,
    });
    return 'execute';
  }
}
