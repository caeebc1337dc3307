import { isTdaError, type ErrorInfo, type StepStatus, type StepType } from '@tda/contracts';
import {
  decideFinalize,
  decideTakeoverFinalize,
  errorInfo,
  InvalidRequestError,
  type FinalizeDecision,
  type FinalizeOutcome,
} from '@tda/flow-engine';
import {
  ConflictRetriesExhaustedError,
  InvalidRunDocumentError,
  InvalidRunPatchError,
  type UpdateDecision,
} from '@tda/flow-store';
import type { BrokerPublisher } from '@tda/messaging';
import { describeError } from '@tda/observability';
import { safeName } from '../artifact-writer';
import type { StepHarnessMetrics } from '../harness-metrics';
import type { HarnessOutcome } from '../harness-outcome';
import { retryWithBackoff } from '../retry';
import type { HarnessLog } from './harness-log';
import type { StepEnd, StepTarget } from './step-end';
import type { StepWrites } from './step-writes';

export interface FinalizerOptions {
  stepType: StepType;
  owner: string;
  writes: StepWrites;
  events: BrokerPublisher;
  log: HarnessLog;
  clock: () => Date;
  /** Tries of the finalize write / step-event publish on store or broker errors (not conflicts). */
  infraMaxTries: number;
  infraBaseDelayMs: number;
  metrics?: StepHarnessMetrics;
}

type FinalizeEnd = Extract<StepEnd, { kind: 'finalize' }>;

/** What reportFinal logs and returns about a final status. */
interface FinalReport {
  status: StepStatus;
  attempt: number;
  error?: ErrorInfo;
  kind: HarnessOutcome['kind'];
  tries?: number;
  recoveredVia?: 'handler' | 'artifact';
  durationMs?: number;
  cause?: unknown;
}

/** Store errors that mean "these outputs cannot be stored", not "the store is down". */
function isUnstorable(error: unknown): boolean {
  return (
    error instanceof InvalidRequestError ||
    error instanceof InvalidRunPatchError ||
    error instanceof InvalidRunDocumentError
  );
}

/**
 * The one exit of a delivery (DESIGN.md §5.3 "finalize → publish step-event → ack"): every
 * StepEnd becomes a HarnessOutcome here. A final status is written with decideFinalize (lease
 * owner only) or decideTakeoverFinalize, then the step event is published; a no-op, an invalid
 * message or a lost lease writes nothing and logs why. Transient store failures are thrown after
 * the local tries (nack).
 */
export class Finalizer {
  constructor(private readonly options: FinalizerOptions) {}

  finish(target: StepTarget, end: StepEnd): Promise<HarnessOutcome> {
    switch (end.kind) {
      case 'finalize':
        return this.complete(target, end);
      case 'report':
        return this.reportFinal(target, { ...end, kind: 'failed' });
      default:
        return Promise.resolve(this.settle(end));
    }
  }

  /** The ends that write nothing: a log line saying why, then ack. */
  settle(end: Exclude<StepEnd, { kind: 'finalize' | 'report' }>): HarnessOutcome {
    switch (end.kind) {
      case 'noop':
        if (end.silent !== true)
          this.options.log.info('step_noop', { reason: end.reason, ...end.fields });
        return { action: 'ack', kind: 'noop', reason: end.reason };
      case 'invalid':
        this.options.log.warn('step_message_invalid', {
          reason: end.reason,
          ...(end.errorCode === undefined ? {} : { errorCode: end.errorCode }),
          ...(end.issues === undefined ? {} : { issues: end.issues }),
          ...end.fields,
        });
        return {
          action: 'ack',
          kind: 'invalid',
          reason: end.reason,
          ...(end.errorCode === undefined ? {} : { errorCode: end.errorCode }),
          ...(end.issues === undefined ? {} : { issues: end.issues }),
        };
      case 'lease_lost':
        this.options.metrics?.leaseLost?.inc({ stepType: this.options.stepType });
        this.options.log.warn('lease_lost', { ...end.detail, tries: end.tries });
        return { action: 'ack', kind: 'noop', reason: 'lease_lost' };
    }
  }

  /**
   * The finalize write (conditional, re-decided on conflicts; store errors retried, then thrown),
   * then the step event. Outputs the store cannot take (bad field names, non-JSON values) finish
   * the step FAILED INTERNAL_ERROR instead of looping.
   */
  private async complete(target: StepTarget, end: FinalizeEnd): Promise<HarnessOutcome> {
    let outcome = end.outcome;
    const written = await retryWithBackoff(() => this.write(target, end, outcome), {
      tries: this.options.infraMaxTries,
      baseDelayMs: this.options.infraBaseDelayMs,
      retryable: (error) => {
        if (error instanceof ConflictRetriesExhaustedError) return false;
        if (!isUnstorable(error)) return true;
        if (
          outcome.status === 'FAILED' &&
          outcome.error.details?.['reason'] === 'unstorable_outputs'
        ) {
          return false; // the fallback itself could not be stored
        }
        this.options.log.write('error', 'step_failed', {
          reason: 'unstorable_outputs',
          error: describeError(error),
        });
        outcome = unstorableOutputs(error, this.options.owner);
        return true;
      },
      canWait: () => true,
    });
    if (!written.ok) throw written.error;
    const decision = written.value;
    if (decision.kind === 'gone') return this.settle({ kind: 'noop', reason: 'run_not_found' });
    if (decision.kind !== 'finalized') {
      this.options.log.warn('step_finalize_conflict', {
        reason: decision.reason,
        intendedStatus: outcome.status,
        ...(decision.currentStatus === undefined ? {} : { currentStatus: decision.currentStatus }),
      });
      return this.settle({ kind: 'noop', reason: `finalize_${decision.reason}`, silent: true });
    }
    return this.reportFinal(target, {
      status: decision.status,
      attempt: end.attempt,
      ...(outcome.status === 'SUCCEEDED' ? {} : { error: outcome.error }),
      kind: kindOf(decision.status, end),
      ...(end.tries === undefined ? {} : { tries: end.tries }),
      ...(end.recoveredVia === undefined ? {} : { recoveredVia: end.recoveredVia }),
      ...(decision.durationMs === undefined ? {} : { durationMs: decision.durationMs }),
      cause: end.cause,
    });
  }

  private async write(
    target: StepTarget,
    end: FinalizeEnd,
    outcome: FinalizeOutcome,
  ): Promise<
    | { kind: 'finalized'; status: StepStatus; durationMs?: number }
    | { kind: 'skipped'; reason: string; currentStatus?: StepStatus }
    | { kind: 'gone' }
  > {
    const written = await this.options.writes.apply(
      'finalize',
      target.runId,
      (run): UpdateDecision<FinalizeDecision> => {
        const options = { now: this.options.clock(), owner: this.options.owner, outcome };
        const decision =
          end.mode === 'owner'
            ? decideFinalize(run, target.stepId, options)
            : decideTakeoverFinalize(run, target.stepId, options);
        return decision.kind === 'finalize'
          ? { kind: 'write', patch: decision.patch, result: decision }
          : { kind: 'noop', reason: decision.kind, result: decision };
      },
      end.known,
    );
    if (written.kind === 'not_found') return { kind: 'gone' };
    const decision = written.result;
    if (decision.kind === 'noop') {
      const reason = decision.reason;
      return {
        kind: 'skipped',
        reason: reason.kind,
        ...('status' in reason ? { currentStatus: reason.status } : {}),
      };
    }
    if (decision.kind === 'invalid')
      return { kind: 'skipped', reason: `invalid:${decision.error.code}` };
    const step = written.kind === 'written' ? written.run.steps[target.stepId] : undefined;
    const durationMs = step?.outputs.execution?.timing?.durationMs;
    if (typeof durationMs === 'number') {
      this.options.metrics?.stepDurationSeconds?.observe(
        { stepType: this.options.stepType, status: decision.status },
        durationMs / 1000,
      );
    }
    return {
      kind: 'finalized',
      status: decision.status,
      ...(typeof durationMs === 'number' ? { durationMs } : {}),
    };
  }

  /** Logs the final step line and publishes the step event (AFTER the finalize write). */
  private async reportFinal(target: StepTarget, final: FinalReport): Promise<HarnessOutcome> {
    const { metrics, stepType, log } = this.options;
    metrics?.stepOutcomes?.inc({
      stepType,
      status: final.status,
      errorCode: final.error?.code ?? 'none',
    });
    const published = await this.publishStepEvent(target, final);
    const fields: Record<string, unknown> = {
      status: final.status,
      ...(final.tries === undefined ? {} : { tries: final.tries }),
      ...(final.durationMs === undefined ? {} : { durationMs: final.durationMs }),
      ...(final.kind === 'recovered' ? { recoveredFromArtifact: true } : {}),
      ...(final.recoveredVia === undefined ? {} : { recoveredVia: final.recoveredVia }),
      stepEventPublished: published,
    };
    if (final.status === 'SUCCEEDED') {
      log.info(final.kind === 'recovered' ? 'step_recovered' : 'step_succeeded', fields);
    } else if (final.status === 'CANCELLED') {
      log.info('step_cancelled', { ...fields, errorCode: final.error?.code });
    } else {
      log.warn('step_failed', {
        ...fields,
        errorCode: final.error?.code,
        ...(final.cause === undefined || isTdaError(final.cause)
          ? {}
          : { error: describeError(final.cause) }),
      });
    }
    return {
      action: 'ack',
      kind: final.kind,
      status: final.status,
      attempt: final.attempt,
      ...(final.error === undefined ? {} : { errorCode: final.error.code }),
      ...(final.tries === undefined ? {} : { tries: final.tries }),
      stepEventPublished: published,
    };
  }

  /**
   * The step event after a durable finalize. A publish that still fails after retries is logged
   * and the delivery is acked anyway: the finalize is already written, a redelivery would see a
   * finished step and could not republish, and the orchestrator's reconcile pass advances runs
   * from the document itself.
   */
  private async publishStepEvent(target: StepTarget, final: FinalReport): Promise<boolean> {
    const message = {
      runId: target.runId,
      stepId: target.stepId,
      stepType: target.stepType,
      status: final.status,
      attempt: final.attempt,
      at: this.options.clock().toISOString(),
      ...(final.error === undefined ? {} : { errorCode: final.error.code }),
    };
    const published = await retryWithBackoff(() => this.options.events.publishStepEvent(message), {
      tries: this.options.infraMaxTries,
      baseDelayMs: this.options.infraBaseDelayMs,
      retryable: () => true,
    });
    if (!published.ok) {
      this.options.log.write('error', 'step_event_publish_failed', {
        ok: false,
        messageType: 'step_event',
        tries: published.tries,
        error: describeError(published.error),
      });
    }
    return published.ok;
  }
}

function kindOf(status: StepStatus, end: FinalizeEnd): HarnessOutcome['kind'] {
  if (status !== 'SUCCEEDED') return 'failed';
  return end.recoveredVia === undefined ? 'executed' : 'recovered';
}

function unstorableOutputs(error: unknown, owner: string): FinalizeOutcome {
  return {
    status: 'FAILED',
    error: errorInfo('INTERNAL_ERROR', `handler outputs could not be stored (${safeName(error)})`, {
      errorClass: safeName(error),
      reason: 'unstorable_outputs',
    }),
    execution: { worker: owner },
  };
}
