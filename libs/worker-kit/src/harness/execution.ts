import { isTdaError, type StepExecution } from '@tda/contracts';
import { errorInfo, type FinalizeOutcome } from '@tda/flow-engine';
import type { VersionedRun } from '@tda/flow-store';
import { abortReasonOf, settleOrAbort } from '../abortable';
import { writeStepArtifacts } from '../artifact-writer';
import type { StepHarnessMetrics } from '../harness-metrics';
import type { StepHarnessPolicy } from '../harness-policy';
import { HarnessShutdownError } from '../harness.errors';
import { retryWithBackoff } from '../retry';
import { StepError } from '../step-errors';
import {
  callExecute,
  type StepAbortReason,
  type StepContext,
  type StepResult,
} from '../step-handler';
import type { AnyStepTypeDescriptor } from '@tda/step-types';
import type { HarnessIo } from './harness-io';
import type { HarnessLog } from './harness-log';
import { cancelledOutcome, finalizeOutcome, stepErrorInfo } from './outcomes';
import { StepBudget, type BudgetLease } from './step-budget';
import { buildStepContext, checkStepInputs } from './step-context';
import type { ClaimedStep, StepEnd, StepTarget } from './step-end';

export interface ExecutionOptions extends HarnessIo {
  policy: Pick<
    StepHarnessPolicy,
    | 'timeoutMs'
    | 'maxDeliveryAttempts'
    | 'handlerMaxTries'
    | 'handlerRetryBaseDelayMs'
    | 'handlerRetryMaxDelayMs'
  >;
  /** The heartbeat settings of one claimed step (the LeaseKeeper of its budget). */
  lease: (target: StepTarget) => BudgetLease;
  log: HarnessLog;
  metrics?: StepHarnessMetrics;
}

type HandlerEnd =
  | { kind: 'result'; result: StepResult; tries: number }
  | { kind: 'error'; error: unknown; tries: number }
  | { kind: 'aborted'; reason: StepAbortReason; tries: number };

/**
 * Execution of a claimed step (DESIGN.md §5.3): the redelivery bound, the run deadline, the
 * inputs check, then the handler under its budget (step deadline, run deadline, cancel and lease
 * loss by heartbeat, shutdown) with in-process retries of retryable errors, then the artifacts
 * create-only, primary last. Returns what to finalize; never writes the run itself.
 */
export class Execution {
  constructor(private readonly options: ExecutionOptions) {}

  async run(target: StepTarget, claimed: ClaimedStep): Promise<StepEnd> {
    const base: StepExecution = {
      timing: { startedAt: claimed.startedAt },
      worker: this.options.owner,
    };
    const finalize = (outcome: FinalizeOutcome, extra: { tries?: number; cause?: unknown } = {}) =>
      ownerFinalize(claimed, outcome, extra);

    const { maxDeliveryAttempts } = this.options.policy;
    const { deliveryAttempt } = target.meta;
    // The emulator never dead-letters: bound redelivery loops here (DESIGN.md §4).
    if (deliveryAttempt > maxDeliveryAttempts) {
      const message = `step-ready message delivered ${deliveryAttempt} times (max ${maxDeliveryAttempts})`;
      const error = errorInfo('RETRIES_EXHAUSTED', message, {
        deliveryAttempt,
        maxDeliveryAttempts,
      });
      return finalize({ status: 'FAILED', error, execution: base }, { tries: 0 });
    }
    // flow-engine's claim decision: the run is past its deadline, its result could not be used.
    if (claimed.runDeadlinePassed) {
      return finalize(cancelledOutcome('deadline_passed', base), { tries: 0 });
    }
    const { handler } = this.options;
    const checked = checkStepInputs(handler.descriptor, claimed.run, target.stepId, claimed.step);
    if (!checked.ok) {
      return finalize(
        { status: 'FAILED', error: checked.error, execution: base },
        { tries: 0, cause: checked.cause },
      );
    }
    return this.execute(target, claimed, checked, base);
  }

  private async execute(
    target: StepTarget,
    claimed: ClaimedStep,
    checked: Parameters<typeof buildStepContext>[0]['checked'],
    base: StepExecution,
  ): Promise<StepEnd> {
    const { clock, policy } = this.options;
    const budget = new StepBudget({
      deadline: new Date(Date.parse(claimed.startedAt) + policy.timeoutMs),
      ...(claimed.runDeadlineMs === undefined ? {} : { runDeadlineMs: claimed.runDeadlineMs }),
      clock,
      lease: this.options.lease(target),
      live: this.options.live,
    });
    let end: HandlerEnd;
    let written: Awaited<ReturnType<typeof writeStepArtifacts>> | undefined;
    try {
      const context = buildStepContext({
        descriptor: this.options.handler.descriptor,
        run: claimed.run,
        stepId: target.stepId,
        step: claimed.step,
        attempt: claimed.attempt,
        checked,
        budget,
        artifacts: this.options.artifacts,
        registry: this.options.registry,
        owner: this.options.owner,
        checkpoints: this.options.checkpoints,
        artifactUri: this.options.artifactUri(target, claimed.step.timeframe),
        clock,
      });
      end = await this.runHandler(context, budget);
      if (end.kind === 'result') {
        const problem = primaryArtifactProblem(
          this.options.handler.descriptor,
          claimed.run.runId,
          target.stepId,
          end.result,
        );
        if (problem !== undefined) end = { kind: 'error', error: problem, tries: end.tries };
      }
      // The heartbeat keeps the lease while artifacts are written; only lease loss stops us.
      if (end.kind === 'result') {
        written = await writeStepArtifacts(end.result, {
          ...this.options.writer,
          signal: leaseLostOnly(budget.signal),
        });
      }
    } finally {
      // No heartbeat may land after (or race with) the finalize.
      await budget.stop();
    }
    return this.conclude(claimed, base, budget, end, written);
  }

  private conclude(
    claimed: ClaimedStep,
    base: StepExecution,
    budget: StepBudget,
    end: HandlerEnd,
    written: Awaited<ReturnType<typeof writeStepArtifacts>> | undefined,
  ): StepEnd {
    const finalize = (outcome: FinalizeOutcome, cause?: unknown) =>
      ownerFinalize(
        claimed,
        outcome,
        { tries: end.tries, ...(cause === undefined ? {} : { cause }) },
        budget.lastRunWrite,
      );
    if (end.kind === 'aborted' || written?.kind === 'aborted') {
      const reason: StepAbortReason = end.kind === 'aborted' ? end.reason : { kind: 'lease_lost' };
      switch (reason.kind) {
        case 'lease_lost':
          return {
            kind: 'lease_lost',
            detail: budget.leaseLostDetail,
            tries: end.tries,
            attempt: claimed.attempt,
          };
        case 'shutdown':
          throw new HarnessShutdownError();
        case 'deadline': {
          const { timeoutMs } = this.options.policy;
          const error = errorInfo('STEP_TIMEOUT', `step exceeded its timeout of ${timeoutMs} ms`, {
            timeoutMs,
            tries: end.tries,
          });
          return finalize({ status: 'FAILED', error, execution: base });
        }
        case 'cancelled':
          return finalize(cancelledOutcome(budget.cancelCause ?? 'cancel_requested', base));
      }
    }
    if (end.kind === 'error') {
      // What the handler knew when it failed (seed 002 failure finalize), if it said.
      const partial = end.error instanceof StepError ? end.error.execution : undefined;
      const error = stepErrorInfo(end.error, end.tries);
      return finalize({ status: 'FAILED', error, execution: { ...partial, ...base } }, end.error);
    }
    if (written === undefined) return { kind: 'noop', reason: 'nothing_written' };
    if (written.kind === 'failed') {
      return finalize({ status: 'FAILED', error: written.error, execution: base });
    }
    return finalize(finalizeOutcome(end.result, written.primary, base, this.options.owner));
  }

  /**
   * execute() with in-process retries of retryable errors (seed 004: 3 tries, 1 s / 2 s / 4 s)
   * while the next try can start before the deadline. A `final` StepError is never retried here
   * (its thrower retried already, or an answered model call must not be repeated).
   */
  private async runHandler(context: StepContext, budget: StepBudget): Promise<HandlerEnd> {
    const { handler, policy, clock, log, metrics } = this.options;
    const execute = (ctx: StepContext): Promise<StepResult> => callExecute(handler, ctx);
    let aborted: StepAbortReason | undefined;
    const outcome = await retryWithBackoff(
      async () => {
        const settled = await settleOrAbort(() => execute(context), budget.signal);
        if (settled.kind === 'aborted') {
          aborted = settled.reason;
          throw new Error('aborted');
        }
        if (settled.kind === 'error') throw settled.error;
        return settled.value;
      },
      {
        tries: policy.handlerMaxTries,
        baseDelayMs: policy.handlerRetryBaseDelayMs,
        maxDelayMs: policy.handlerRetryMaxDelayMs,
        retryable: (error) =>
          aborted === undefined &&
          isTdaError(error) &&
          error.retryable &&
          !(error instanceof StepError && error.final),
        canWait: (delayMs) => clock().getTime() + delayMs < budget.deadline.getTime(),
        onRetry: (error, tries, delayMs) => {
          const code = isTdaError(error) ? error.code : 'INTERNAL_ERROR';
          metrics?.handlerRetries?.inc({ stepType: handler.descriptor.stepType, code });
          log.warn('step_retry', { willRetry: true, errorCode: code, tries, nextTryInMs: delayMs });
        },
        signal: budget.signal,
      },
    );
    if (outcome.ok) return { kind: 'result', result: outcome.value, tries: outcome.tries };
    if (aborted !== undefined) return { kind: 'aborted', reason: aborted, tries: outcome.tries };
    if (outcome.aborted) {
      return { kind: 'aborted', reason: abortReasonOf(budget.signal), tries: outcome.tries };
    }
    return { kind: 'error', error: outcome.error, tries: outcome.tries };
  }
}

/**
 * The handler's primary artifact checked at the edge, before anything is written: it must be
 * valid against the step type's artifact contract and say it is this run's and step's. A
 * failure is our bug (INTERNAL_ERROR, never retried), not the caller's.
 */
function primaryArtifactProblem(
  descriptor: AnyStepTypeDescriptor,
  runId: string,
  stepId: string,
  result: StepResult,
): StepError | undefined {
  const primary = result.artifacts.find((artifact) => artifact.uri === result.primaryUri);
  if (primary === undefined) return undefined; // an existing artifact (checked when written)
  const { contract } = descriptor.artifact;
  const fail = (problem: string, details: Record<string, unknown> = {}): StepError =>
    new StepError('INTERNAL_ERROR', `the step's ${contract} artifact ${problem}`, {
      details: { contract, ...details },
      retryable: false,
    });
  let parsed: unknown;
  try {
    parsed = JSON.parse(primary.data.toString('utf8'));
  } catch {
    return fail('is not JSON');
  }
  const checked = descriptor.artifact.validate(parsed);
  if (!checked.ok) {
    const issues = checked.issues.slice(0, 5);
    return fail(
      `violates ${contract}.schema.json: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`,
      { issues },
    );
  }
  const identity = descriptor.artifact.identity(checked.value);
  if (identity.runId !== runId || identity.stepId !== stepId)
    return fail('names another run or step');
  const problem = descriptor.artifact.check?.(checked.value);
  return problem === undefined ? undefined : fail(problem);
}

/**
 * After the handler returned, only lease loss stops the artifact writes: a cancel or deadline
 * that fires now would throw away finished work, and the finalize decides what happens with it.
 */
function leaseLostOnly(signal: AbortSignal): AbortSignal {
  const controller = new AbortController();
  const forward = (): void => {
    if (abortReasonOf(signal).kind === 'lease_lost') controller.abort(signal.reason);
  };
  if (signal.aborted) forward();
  else signal.addEventListener('abort', forward, { once: true });
  return controller.signal;
}

/**
 * The finalize of a step this delivery claimed. It starts from the run as this delivery last
 * wrote it (its last heartbeat, else its claim) when no other step was in flight at the claim (a
 * chain): nobody else is likely to have written the run since. With siblings READY or RUNNING (a
 * fan-out) that snapshot is almost always stale, and a refused write would cost more than the
 * read it saves.
 */
function ownerFinalize(
  claimed: ClaimedStep,
  outcome: FinalizeOutcome,
  extra: { tries?: number; cause?: unknown },
  heartbeat?: VersionedRun,
): StepEnd {
  const { run, version, step } = claimed;
  const alone = Object.values(run.steps).every(
    (other) => other === step || (other.status !== 'READY' && other.status !== 'RUNNING'),
  );
  const known = heartbeat ?? (version === undefined ? undefined : { run, version });
  return {
    kind: 'finalize',
    mode: 'owner',
    attempt: claimed.attempt,
    outcome,
    ...extra,
    ...(known === undefined || !alone ? {} : { known }),
  };
}
