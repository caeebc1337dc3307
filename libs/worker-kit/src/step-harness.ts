import type { ArtifactStore } from '@tda/artifacts';
import {
  isTdaError,
  validate,
  type ErrorInfo,
  type FlowRun,
  type FlowStep,
  type StepExecution,
  type StepStatus,
  type StepType,
  type ValidationIssue,
} from '@tda/contracts';
import {
  assertWorkerIdentity,
  decideClaim,
  decideFinalize,
  decideTakeover,
  decideTakeoverFinalize,
  describeNotExecutable,
  errorInfo,
  InvalidRequestError,
  isStorageSafeStepId,
  type ClaimDecision,
  type FinalizeDecision,
  type FinalizeOutcome,
  takeoverEligibility,
  type TakeoverDecision,
} from '@tda/flow-engine';
import {
  ConflictRetriesExhaustedError,
  InvalidRunDocumentError,
  InvalidRunPatchError,
  updateWithRetry,
  type FlowRunStore,
  type UpdateDecision,
  type UpdateOutcome,
  type UpdateWithRetryOptions,
} from '@tda/flow-store';
import { BrokerPublisher, type Publisher } from '@tda/messaging';
import {
  describeError,
  logEvent,
  sanitizeForLog,
  withLogContext,
  type LogEvent,
  type Logger,
  type LogLevel,
} from '@tda/observability';
import { abortableSleep, abortReasonOf, settleOrAbort } from './abortable';
import { stepArtifactUri } from './artifact-naming';
import {
  describeExistingArtifact,
  safeName,
  writeStepArtifacts,
  type WrittenArtifact,
} from './artifact-writer';
import type { StepHarnessMetrics } from './harness-metrics';
import type { HarnessOutcome } from './harness-outcome';
import { exponentialDelayMs, resolveHarnessPolicy, type StepHarnessPolicy } from './harness-policy';
import { HarnessShutdownError } from './harness.errors';
import { LeaseKeeper, type CancelCause } from './lease-keeper';
import { StepError } from './step-errors';
import type {
  StepAbortReason,
  StepExecutionContext,
  StepHandler,
  StepRecoveryContext,
  StepResult,
} from './step-handler';

export interface DeliveryMeta {
  /** 1-based delivery count of this message (PubSubContext.getDeliveryAttempt()). */
  deliveryAttempt: number;
  messageId?: string;
}

export interface StepHarnessOptions {
  handler: StepHandler;
  store: FlowRunStore;
  artifacts: ArtifactStore;
  /** Where step events go (topic tda-step-events, messageType step_event). */
  publisher: Publisher;
  logger: Logger;
  metrics?: StepHarnessMetrics;
  clock?: () => Date;
  /** This worker's identity in leases; unique per process (see defaultWorkerOwner). */
  owner: string;
  policy?: Partial<StepHarnessPolicy>;
  /** Uniform [0, 1) for the conflict backoff jitter; injectable for tests. */
  random?: () => number;
}

/** The step-ready message, validated, plus the delivery it came with. */
interface Target {
  runId: string;
  stepId: string;
  stepType: StepType;
  meta: DeliveryMeta;
}

interface Claimed {
  run: FlowRun;
  step: FlowStep;
  attempt: number;
  startedAt: string;
  via: 'claim' | 'takeover';
  /** The primary artifact was just found absent (takeover of our own orphan): skip the check. */
  artifactChecked?: boolean;
}

type ExecutionEnd =
  | { kind: 'result'; result: StepResult; tries: number }
  | { kind: 'error'; error: ErrorInfo; tries: number; cause?: unknown }
  | { kind: 'aborted'; reason: StepAbortReason; tries: number };

type FinalizeMode = 'owner' | 'takeover';

interface Completion {
  outcome: FinalizeOutcome;
  attempt: number;
  tries?: number;
  recovered?: boolean;
  /** Recovery: handler.recover produced the result, or the bare artifact did. */
  recoveredVia?: 'handler' | 'artifact';
  /** Logged with the step_failed line (describeError of an unexpected handler error). */
  cause?: unknown;
}

/**
 * The step harness (DESIGN.md §5 step 3): everything a worker does with a step-ready message
 * except the business logic, which is the StepHandler's. One harness per step type.
 *
 * validate message → claim (conditional, re-decided on conflicts) → [recovery check for a
 * RUNNING step] → validateInputs → execute with deadline / cancel / lease-loss signal and
 * heartbeats → artifacts create-only, primary last → finalize (lease owner only) → step event.
 *
 * Returns an ack outcome for everything decided (including FAILED steps and no-ops) and THROWS
 * for transient infrastructure failures so the transport nacks. See README.md for the rules.
 */
export class StepHarness {
  readonly stepType: StepType;
  readonly owner: string;
  readonly policy: StepHarnessPolicy;
  private readonly handler: StepHandler;
  private readonly store: FlowRunStore;
  private readonly artifacts: ArtifactStore;
  private readonly events: BrokerPublisher;
  private readonly logger: Logger;
  private readonly metrics: StepHarnessMetrics | undefined;
  private readonly clock: () => Date;
  private readonly random: (() => number) | undefined;
  /** `runId/stepId` of every delivery being processed here: in-process duplicates are no-ops. */
  private readonly inProcess = new Set<string>();
  /** Abort controllers of running handlers (for shutdown). */
  private readonly executions = new Map<string, AbortController>();
  private readonly running = new Set<Promise<unknown>>();
  private shuttingDown = false;

  constructor(options: StepHarnessOptions) {
    this.handler = options.handler;
    this.stepType = options.handler.stepType;
    // Step-level defaults (timeout, lease, attempts, retries) come from the step type's policy.
    this.policy = resolveHarnessPolicy(options.policy, options.handler.stepType);
    assertWorkerIdentity(options.owner, this.policy.leaseMs);
    this.owner = options.owner;
    this.store = options.store;
    this.artifacts = options.artifacts;
    this.logger = options.logger;
    this.events = new BrokerPublisher({
      publisher: options.publisher,
      prefix: this.policy.topicPrefix,
      logger: options.logger,
    });
    this.metrics = options.metrics;
    this.clock = options.clock ?? (() => new Date());
    this.random = options.random;
  }

  /** Steps executing (or being recovered) in this harness right now. */
  get activeCount(): number {
    return this.inProcess.size;
  }

  async handleStepReady(body: unknown, meta: DeliveryMeta): Promise<HarnessOutcome> {
    if (this.shuttingDown) throw new HarnessShutdownError();
    const parsed = validate.stepReady(body);
    if (!parsed.ok) return this.count(this.rejectMessage(body, parsed.issues));
    const { runId, stepId, stepType } = parsed.value;
    const target: Target = { runId, stepId, stepType, meta };
    const work = withLogContext(
      {
        runId,
        stepId,
        stepType,
        deliveryAttempt: meta.deliveryAttempt,
        messageId: meta.messageId,
      },
      () => this.process(target),
    );
    this.running.add(work);
    try {
      return this.count(await work);
    } finally {
      this.running.delete(work);
    }
  }

  /**
   * Refuses new deliveries (they throw → nack) and aborts running handlers with reason
   * 'shutdown': they write nothing more, their messages are nacked and redelivered, and the
   * lease expires for the reconciler. Waits until every delivery in progress has settled.
   */
  async shutdown(): Promise<void> {
    this.shuttingDown = true;
    for (const controller of this.executions.values()) {
      controller.abort({ kind: 'shutdown' } satisfies StepAbortReason);
    }
    await Promise.allSettled([...this.running]);
  }

  // -- message -------------------------------------------------------------------------------

  private rejectMessage(body: unknown, issues: readonly ValidationIssue[]): HarnessOutcome {
    const stepId =
      typeof body === 'object' && body !== null
        ? (body as Record<string, unknown>)['stepId']
        : undefined;
    // A stepId that cannot be a Firestore field-path segment / object name: the run is broken
    // (FLOW_RUN_INVALID, seed 001) and nothing can be patched under that id.
    if (typeof stepId === 'string' && !isStorageSafeStepId(stepId)) {
      this.log('warn', 'step_message_invalid', {
        reason: 'unsafe_step_id',
        errorCode: 'FLOW_RUN_INVALID',
        stepId: sanitizeForLog(stepId, { maxStringLength: 64 }),
      });
      return {
        action: 'ack',
        kind: 'invalid',
        reason: 'unsafe_step_id',
        errorCode: 'FLOW_RUN_INVALID',
        issues: sanitizeForLog(issues),
      };
    }
    this.log('warn', 'step_message_invalid', {
      reason: 'invalid_message',
      issues: sanitizeForLog(issues),
    });
    return {
      action: 'ack',
      kind: 'invalid',
      reason: 'invalid_message',
      issues: sanitizeForLog(issues),
    };
  }

  private async process(target: Target): Promise<HarnessOutcome> {
    if (target.stepType !== this.stepType) {
      return this.noop('step_type_mismatch', { handlerStepType: this.stepType });
    }
    const key = `${target.runId}/${target.stepId}`;
    // Serialise deliveries of one step inside this process: a duplicate that arrives while the
    // first copy is claiming or executing is acked without a single read.
    if (this.inProcess.has(key)) return this.noop('duplicate_in_process');
    this.inProcess.add(key);
    try {
      return await this.claim(target);
    } finally {
      this.inProcess.delete(key);
    }
  }

  // -- claim ---------------------------------------------------------------------------------

  private async claim(target: Target): Promise<HarnessOutcome> {
    let seen: FlowRun | undefined;
    const outcome = await this.conditionalWrite(
      'claim',
      target,
      (run): UpdateDecision<ClaimDecision> => {
        seen = run;
        const decision = decideClaim(run, target.stepId, {
          now: this.clock(),
          owner: this.owner,
          leaseMs: this.policy.leaseMs,
          stepType: this.stepType,
          // the reconciler reads the effective policy from the document
          timeoutMs: this.policy.timeoutMs,
          maxAttempts: this.policy.maxAttempts,
        });
        if (decision.kind === 'claim')
          return { kind: 'write', patch: decision.patch, result: decision };
        if (decision.kind === 'invalid' && decision.patch !== undefined) {
          return { kind: 'write', patch: decision.patch, result: decision };
        }
        return { kind: 'noop', reason: decision.kind, result: decision };
      },
    );
    if (outcome.kind === 'not_found') return this.noop('run_not_found');
    const decision = outcome.result;
    this.metrics?.stepClaims?.inc({
      stepType: this.stepType,
      result: outcome.kind === 'written' && decision.kind === 'claim' ? 'claimed' : 'noop',
    });

    if (outcome.kind === 'written') {
      if (decision.kind === 'claim') {
        const step = outcome.run.steps[target.stepId];
        if (step === undefined) return this.noop('unknown_step');
        return this.execute(target, {
          run: outcome.run,
          step,
          attempt: decision.attempt,
          startedAt: decision.startedAt,
          via: 'claim',
        });
      }
      if (decision.kind === 'invalid') {
        // Unknown dependsOn: decideClaim's patch failed the step (INVALID_STEP_INPUTS, seed 002).
        const attempt = outcome.run.steps[target.stepId]?.attempt ?? 0;
        return this.reportFinal(target, {
          status: 'FAILED',
          attempt,
          error: decision.error,
          kind: 'failed',
        });
      }
    }

    switch (decision.kind) {
      case 'invalid':
        this.log('warn', 'step_message_invalid', {
          reason: 'unsafe_step_id',
          errorCode: decision.error.code,
        });
        return {
          action: 'ack',
          kind: 'invalid',
          reason: 'unsafe_step_id',
          errorCode: decision.error.code,
        };
      case 'noop': {
        const { reason } = decision;
        if (reason.kind === 'already_running' && seen !== undefined)
          return this.onRunning(target, seen);
        if (reason.kind === 'already_running') return this.noop('already_running');
        return this.noop(reason.kind, { detail: describeNotExecutable(reason) });
      }
      case 'claim':
        // Unreachable: a claim decision is always written or superseded by a re-decision.
        return this.noop('claim_superseded');
    }
  }

  /**
   * The step is RUNNING. Held by a live lease of another worker → no-op. Otherwise (lease
   * expired, or our own orphan) look for the deterministic primary artifact: present → finalize
   * from it without executing (seed 002 split-brain); absent and ours → take over and execute
   * again; absent and expired → leave it to the reconciler (DESIGN.md §5.4 reclaims it).
   */
  private async onRunning(target: Target, run: FlowRun): Promise<HarnessOutcome> {
    const eligibility = takeoverEligibility(run, target.stepId, {
      now: this.clock(),
      owner: this.owner,
    });
    if (!eligibility.eligible) {
      return this.noop('already_running', {
        ...(eligibility.leaseOwner === undefined ? {} : { leaseOwner: eligibility.leaseOwner }),
        ...(eligibility.leaseExpiresAt === undefined
          ? {}
          : { leaseExpiresAt: eligibility.leaseExpiresAt }),
      });
    }
    const { step } = eligibility;
    const primaryUri = this.artifactUriFor(target, step)();
    if (await this.artifacts.exists(primaryUri)) {
      const recovered = await this.recover(target, run, step, primaryUri, 'takeover', step.attempt);
      return recovered === 'execute' ? this.takeover(target) : recovered;
    }
    if (eligibility.why === 'own_orphan') return this.takeover(target);
    return this.noop('lease_expired', {
      detail: 'left to the reconciler (reclaim or LEASE_EXPIRED)',
    });
  }

  /**
   * Our own orphan (or an artifact handler.recover refused): claim it again and execute — unless
   * the step already used policy.maxAttempts claims, then it fails RETRIES_EXHAUSTED (a loop of
   * redeliveries that keep re-executing one step is bounded by step.attempt).
   */
  private async takeover(target: Target): Promise<HarnessOutcome> {
    let readAttempt = 0;
    const outcome = await this.conditionalWrite(
      'claim',
      target,
      (run): UpdateDecision<TakeoverDecision> => {
        readAttempt = run.steps[target.stepId]?.attempt ?? 0;
        const decision = decideTakeover(run, target.stepId, {
          now: this.clock(),
          owner: this.owner,
          leaseMs: this.policy.leaseMs,
          timeoutMs: this.policy.timeoutMs,
          maxAttempts: this.policy.maxAttempts,
        });
        return decision.kind === 'claim'
          ? { kind: 'write', patch: decision.patch, result: decision }
          : { kind: 'noop', reason: decision.reason, result: decision };
      },
    );
    if (outcome.kind === 'not_found') return this.noop('run_not_found');
    if (outcome.kind === 'noop' && outcome.reason === 'attempts_exhausted') {
      return this.complete(
        target,
        {
          outcome: {
            status: 'FAILED',
            error: errorInfo(
              'RETRIES_EXHAUSTED',
              `step already claimed ${readAttempt} times (max ${this.policy.maxAttempts})`,
              { attempt: readAttempt, maxAttempts: this.policy.maxAttempts },
            ),
            execution: this.baseExecution(),
          },
          attempt: readAttempt,
          tries: 0,
        },
        'takeover',
      );
    }
    if (outcome.kind === 'noop' || outcome.result.kind === 'noop') {
      return this.noop(outcome.kind === 'noop' ? outcome.reason : 'takeover_not_possible');
    }
    const decision = outcome.result;
    const step = outcome.run.steps[target.stepId];
    if (step === undefined) return this.noop('unknown_step');
    return this.execute(target, {
      run: outcome.run,
      step,
      attempt: decision.attempt,
      startedAt: decision.startedAt,
      via: 'takeover',
      // Known absent, or present but refused by handler.recover: execute either way.
      artifactChecked: true,
    });
  }

  // -- recovery ------------------------------------------------------------------------------

  /**
   * Finalizes from an existing primary artifact without executing: handler.recover builds the
   * result when the handler has one (null = "execute normally" → 'execute'), otherwise the
   * artifact's uri, sha256 and size are enough. `takeover` mode finalizes a RUNNING step of an
   * expired or orphaned lease in one conditional write; `owner` mode is for a step we just
   * claimed (a READY step whose previous attempt wrote the artifact and was then reclaimed).
   */
  private async recover(
    target: Target,
    run: FlowRun,
    step: FlowStep,
    primaryUri: string,
    mode: FinalizeMode,
    attempt: number,
    startedAt?: string,
  ): Promise<HarnessOutcome | 'execute'> {
    let result: StepResult | null = null;
    let viaHandler = false;
    if (this.handler.recover !== undefined) {
      let inputs: unknown;
      let inputsOk = true;
      try {
        inputs = this.handler.validateInputs(run, target.stepId, step);
      } catch {
        // Inputs that no longer validate cannot drive handler.recover; the artifact still can.
        inputsOk = false;
      }
      if (inputsOk) {
        const recover = this.handler.recover.bind(this.handler);
        const controller = new AbortController();
        const deadline = new Date(this.clock().getTime() + this.policy.timeoutMs);
        const timer = setTimeout(
          () => controller.abort({ kind: 'deadline' } satisfies StepAbortReason),
          this.policy.timeoutMs,
        );
        const key = `${target.runId}/${target.stepId}`;
        this.executions.set(key, controller);
        try {
          const context: StepRecoveryContext<unknown> = {
            ...this.executionContext(target, run, step, inputs, attempt, controller, deadline),
            existingUri: primaryUri,
          };
          const settled = await settleOrAbort(() => recover(context), controller.signal);
          if (settled.kind === 'aborted') {
            if (settled.reason.kind === 'shutdown') throw new HarnessShutdownError();
            return this.noop('recovery_aborted', { abort: settled.reason.kind });
          }
          // A failing recover is an infrastructure problem (e.g. the artifact cannot be read
          // right now): nack and let the redelivery try again.
          if (settled.kind === 'error') throw settled.error;
          result = settled.value;
          viaHandler = true;
        } finally {
          clearTimeout(timer);
          this.executions.delete(key);
        }
        // null: the handler will not vouch for the artifact → execute normally.
        if (result === null) return 'execute';
      }
    }

    let primary: WrittenArtifact | undefined;
    if (result === null) {
      primary = await describeExistingArtifact(this.artifacts, primaryUri);
      if (primary === undefined) return this.noop('artifact_vanished');
      result = { artifacts: [], primaryUri };
    } else {
      const written = await writeStepArtifacts(result, this.artifactWriterOptions());
      if (written.kind === 'aborted') return this.noop('recovery_aborted');
      if (written.kind === 'failed') {
        return this.complete(
          target,
          {
            outcome: {
              status: 'FAILED',
              error: written.error,
              execution: this.baseExecution(startedAt),
            },
            attempt,
            recovered: true,
          },
          mode,
        );
      }
      primary = written.primary;
    }
    return this.complete(
      target,
      {
        outcome: this.outcomeFromResult(result, primary, {
          ...this.baseExecution(startedAt),
          recoveredFromArtifact: true,
        }),
        attempt,
        recovered: true,
        recoveredVia: viaHandler ? 'handler' : 'artifact',
      },
      mode,
    );
  }

  // -- execution -----------------------------------------------------------------------------

  private execute(target: Target, claimed: Claimed): Promise<HarnessOutcome> {
    return withLogContext({ attempt: claimed.attempt }, async () => {
      this.log('info', 'step_claimed', {
        via: claimed.via,
        leaseExpiresAt: claimed.step.lease?.expiresAt,
      });
      const base = this.baseExecution(claimed.startedAt);

      // DESIGN §5.3: after the claim, the recovery check. A READY step may have been reclaimed
      // after an attempt that wrote its artifact but crashed before the finalize (seed 002
      // "output written but Firestore update failed"): finalize from it, do not redo the work.
      if (claimed.artifactChecked !== true) {
        const primaryUri = this.artifactUriFor(target, claimed.step)();
        if (await this.artifacts.exists(primaryUri)) {
          const recovered = await this.recover(
            target,
            claimed.run,
            claimed.step,
            primaryUri,
            'owner',
            claimed.attempt,
            claimed.startedAt,
          );
          if (recovered !== 'execute') return recovered;
        }
      }

      // The emulator never dead-letters: bound redelivery loops here (DESIGN.md §4).
      if (target.meta.deliveryAttempt > this.policy.maxDeliveryAttempts) {
        return this.complete(target, {
          outcome: {
            status: 'FAILED',
            error: errorInfo(
              'RETRIES_EXHAUSTED',
              `step-ready message delivered ${target.meta.deliveryAttempt} times (max ${this.policy.maxDeliveryAttempts})`,
              {
                deliveryAttempt: target.meta.deliveryAttempt,
                maxDeliveryAttempts: this.policy.maxDeliveryAttempts,
              },
            ),
            execution: base,
          },
          attempt: claimed.attempt,
          tries: 0,
        });
      }

      // The run already passed its deadline: its result could not be used (advance fails the run
      // with RUN_TIMEOUT); stop before doing any work.
      const runDeadlineMs = parseTime(claimed.run.deadlineAt);
      if (runDeadlineMs !== undefined && runDeadlineMs <= this.clock().getTime()) {
        return this.complete(target, {
          outcome: this.cancelledOutcome('deadline_passed', base),
          attempt: claimed.attempt,
          tries: 0,
        });
      }

      let inputs: unknown;
      try {
        inputs = this.handler.validateInputs(claimed.run, target.stepId, claimed.step);
      } catch (error) {
        return this.complete(target, {
          outcome: { status: 'FAILED', error: this.toStepErrorInfo(error, 0), execution: base },
          attempt: claimed.attempt,
          tries: 0,
          cause: error,
        });
      }

      const key = `${target.runId}/${target.stepId}`;
      const controller = new AbortController();
      const deadline = new Date(Date.parse(claimed.startedAt) + this.policy.timeoutMs);
      const deadlineTimer = setTimeout(
        () => controller.abort({ kind: 'deadline' } satisfies StepAbortReason),
        Math.max(0, deadline.getTime() - this.clock().getTime()),
      );
      let cancelCause: CancelCause | undefined;
      // The run deadline stops the step at once; its heartbeat would only see it at the next beat.
      const runDeadlineTimer =
        runDeadlineMs === undefined || runDeadlineMs >= deadline.getTime()
          ? undefined
          : setTimeout(
              () => {
                cancelCause ??= 'deadline_passed';
                controller.abort({ kind: 'cancelled' } satisfies StepAbortReason);
              },
              Math.max(0, runDeadlineMs - this.clock().getTime()),
            );
      let leaseLostDetail: Record<string, unknown> | undefined;
      const keeper = new LeaseKeeper({
        store: this.store,
        runId: target.runId,
        stepId: target.stepId,
        stepType: this.stepType,
        owner: this.owner,
        leaseMs: this.policy.leaseMs,
        heartbeatMs: this.policy.heartbeatMs,
        clock: this.clock,
        logger: this.logger,
        retry: this.retryOptions(),
        ...(this.metrics === undefined ? {} : { metrics: this.metrics }),
        onLeaseLost: (detail) => {
          leaseLostDetail = detail;
          controller.abort({ kind: 'lease_lost' } satisfies StepAbortReason);
        },
        onCancelRequested: (cause) => {
          cancelCause = cause;
          controller.abort({ kind: 'cancelled' } satisfies StepAbortReason);
        },
      });
      this.executions.set(key, controller);
      keeper.start();

      let end: ExecutionEnd;
      let written: Awaited<ReturnType<typeof writeStepArtifacts>> | undefined;
      try {
        const context = this.executionContext(
          target,
          claimed.run,
          claimed.step,
          inputs,
          claimed.attempt,
          controller,
          deadline,
          (progress) => keeper.report(progress),
        );
        end = await this.runHandler(context, controller.signal, deadline);
        clearTimeout(deadlineTimer);
        clearTimeout(runDeadlineTimer);
        if (end.kind === 'result') {
          // The heartbeat keeps the lease while artifacts are written; only lease loss stops us.
          written = await writeStepArtifacts(
            end.result,
            this.artifactWriterOptions(controller.signal),
          );
        }
      } finally {
        clearTimeout(deadlineTimer);
        clearTimeout(runDeadlineTimer);
        // No heartbeat may land after (or race with) the finalize.
        await keeper.stop();
        this.executions.delete(key);
      }

      if (end.kind === 'aborted' || written?.kind === 'aborted') {
        const reason: StepAbortReason =
          end.kind === 'aborted' ? end.reason : { kind: 'lease_lost' };
        switch (reason.kind) {
          case 'lease_lost':
            this.metrics?.leaseLost?.inc({ stepType: this.stepType });
            this.log('warn', 'lease_lost', { ...leaseLostDetail, tries: end.tries });
            return this.noop('lease_lost', { silent: true });
          case 'shutdown':
            throw new HarnessShutdownError();
          case 'deadline':
            return this.complete(target, {
              outcome: {
                status: 'FAILED',
                error: errorInfo(
                  'STEP_TIMEOUT',
                  `step exceeded its timeout of ${this.policy.timeoutMs} ms`,
                  { timeoutMs: this.policy.timeoutMs, tries: end.tries },
                ),
                execution: base,
              },
              attempt: claimed.attempt,
              tries: end.tries,
            });
          case 'cancelled':
            return this.complete(target, {
              outcome: this.cancelledOutcome(cancelCause ?? 'cancel_requested', base),
              attempt: claimed.attempt,
              tries: end.tries,
            });
        }
      }

      if (end.kind === 'error') {
        // The last try's partial execution metadata (seed 002 failure finalize), if it gave any.
        const partial = end.cause instanceof StepError ? end.cause.execution : undefined;
        return this.complete(target, {
          outcome: { status: 'FAILED', error: end.error, execution: { ...partial, ...base } },
          attempt: claimed.attempt,
          tries: end.tries,
          cause: end.cause,
        });
      }
      if (written === undefined) return this.noop('nothing_written');
      if (written.kind === 'failed') {
        return this.complete(target, {
          outcome: { status: 'FAILED', error: written.error, execution: base },
          attempt: claimed.attempt,
          tries: end.tries,
        });
      }
      return this.complete(target, {
        outcome: this.outcomeFromResult(end.result, written.primary, base),
        attempt: claimed.attempt,
        tries: end.tries,
      });
    });
  }

  /** A step stopped because its run was cancelled, finished or passed its deadline. */
  private cancelledOutcome(cause: CancelCause, execution: StepExecution): FinalizeOutcome {
    return {
      status: 'CANCELLED',
      error: errorInfo(
        'CANCELLED',
        cause === 'deadline_passed'
          ? 'step stopped: the run passed its deadline'
          : cause === 'run_finished'
            ? 'step stopped: the run already finished'
            : 'step stopped: run cancel requested',
        { cause },
      ),
      execution,
    };
  }

  /** Runs execute() with in-process retries of retryable StepErrors (seed 004: 3 tries). */
  private async runHandler(
    context: StepExecutionContext<unknown>,
    signal: AbortSignal,
    deadline: Date,
  ): Promise<ExecutionEnd> {
    const execute = this.handler.execute.bind(this.handler);
    for (let tries = 1; ; tries += 1) {
      const settled = await settleOrAbort(() => execute(context), signal);
      if (settled.kind === 'aborted') return { kind: 'aborted', reason: settled.reason, tries };
      if (settled.kind === 'ok') return { kind: 'result', result: settled.value, tries };
      const { error } = settled;
      if (
        isTdaError(error) &&
        error.retryable &&
        !(error instanceof StepError && error.final) &&
        tries < this.policy.handlerMaxTries
      ) {
        const delayMs = exponentialDelayMs(
          tries,
          this.policy.handlerRetryBaseDelayMs,
          this.policy.handlerRetryMaxDelayMs,
        );
        // Only retry when the next try can still start before the deadline.
        if (this.clock().getTime() + delayMs < deadline.getTime()) {
          this.metrics?.handlerRetries?.inc({ stepType: this.stepType, code: error.code });
          this.log('warn', 'step_retry', {
            willRetry: true,
            errorCode: error.code,
            tries,
            nextTryInMs: delayMs,
          });
          if (!(await abortableSleep(delayMs, signal))) {
            return { kind: 'aborted', reason: abortReasonOf(signal), tries };
          }
          continue;
        }
      }
      return { kind: 'error', error: this.toStepErrorInfo(error, tries), tries, cause: error };
    }
  }

  /**
   * StepError → its ErrorInfo (+ tries when it was retried); anything else → INTERNAL_ERROR with
   * the error class name only: a raw message may embed inputs or model output (DESIGN.md §6).
   */
  private toStepErrorInfo(error: unknown, tries: number): ErrorInfo {
    if (isTdaError(error)) {
      const info = error.toErrorInfo();
      if (tries > 1) info.details = { ...info.details, tries };
      return info;
    }
    const errorClass = safeName(error);
    return errorInfo('INTERNAL_ERROR', `step handler failed unexpectedly (${errorClass})`, {
      errorClass,
      ...(tries > 0 ? { tries } : {}),
    });
  }

  private executionContext(
    target: Target,
    run: FlowRun,
    step: FlowStep,
    inputs: unknown,
    attempt: number,
    controller: AbortController,
    deadline: Date,
    heartbeat: StepExecutionContext<unknown>['heartbeat'] = () => undefined,
  ): StepExecutionContext<unknown> {
    const artifacts = this.artifacts;
    return {
      run,
      stepId: target.stepId,
      step,
      inputs,
      attempt,
      signal: controller.signal,
      deadline,
      heartbeat,
      artifacts: {
        read: (uri) => artifacts.read(uri),
        exists: (uri) => artifacts.exists(uri),
      },
      artifactUri: this.artifactUriFor(target, step),
      now: () => this.clock(),
    };
  }

  private artifactUriFor(target: Target, step: FlowStep): (suffix?: string) => string {
    return (suffix = this.policy.primaryArtifactSuffix) =>
      stepArtifactUri(
        {
          bucket: this.policy.artifactBucket,
          prefix: this.policy.artifactPrefix,
          runId: target.runId,
          stepId: target.stepId,
          ...(step.timeframe === undefined ? {} : { timeframe: step.timeframe }),
        },
        suffix,
      );
  }

  private artifactWriterOptions(signal?: AbortSignal) {
    return {
      artifacts: this.artifacts,
      maxTries: this.policy.artifactWriteMaxTries,
      baseDelayMs: this.policy.artifactWriteBaseDelayMs,
      sleep: abortableSleep,
      ...(signal === undefined ? {} : { signal: leaseLostOnly(signal) }),
    };
  }

  private baseExecution(startedAt?: string): StepExecution {
    return {
      ...(startedAt === undefined ? {} : { timing: { startedAt } }),
      worker: this.owner,
    };
  }

  private outcomeFromResult(
    result: StepResult,
    primary: WrittenArtifact,
    base: StepExecution,
  ): FinalizeOutcome {
    const execution: StepExecution = {
      ...base,
      worker: this.owner,
      artifact: { ...primary },
      ...result.execution,
    };
    const outputs: Record<string, unknown> = { ...result.outputs };
    delete outputs['execution'];
    delete outputs['gcs_uri'];
    if (result.failure !== undefined) {
      return {
        status: 'FAILED',
        error: errorInfo(result.failure.code, result.failure.message, result.failure.details),
        outputs,
        execution,
      };
    }
    return { status: 'SUCCEEDED', gcsUri: result.primaryUri, outputs, execution };
  }

  // -- finalize ------------------------------------------------------------------------------

  /**
   * Finalize (conditional, lease owner only, re-read/re-decided on conflicts; store errors other
   * than conflicts retried infraMaxTries times, then thrown → nack), then the step event.
   */
  private async complete(
    target: Target,
    completion: Completion,
    mode: FinalizeMode = 'owner',
  ): Promise<HarnessOutcome> {
    let outcome = completion.outcome;
    let fallbackUsed = false;
    for (let tries = 1; ; tries += 1) {
      try {
        const written = await this.conditionalWrite(
          'finalize',
          target,
          (run): UpdateDecision<FinalizeDecision> => {
            const options = { now: this.clock(), owner: this.owner, outcome };
            const decision =
              mode === 'owner'
                ? decideFinalize(run, target.stepId, options)
                : decideTakeoverFinalize(run, target.stepId, options);
            return decision.kind === 'finalize'
              ? { kind: 'write', patch: decision.patch, result: decision }
              : { kind: 'noop', reason: decision.kind, result: decision };
          },
        );
        if (written.kind === 'not_found') return this.noop('run_not_found');
        const decision = written.result;
        if (decision.kind !== 'finalize') {
          const reason =
            decision.kind === 'noop' ? decision.reason.kind : `invalid:${decision.error.code}`;
          this.log('warn', 'step_finalize_conflict', {
            reason,
            intendedStatus: outcome.status,
            ...(decision.kind === 'noop' && 'status' in decision.reason
              ? { currentStatus: decision.reason.status }
              : {}),
          });
          return this.noop(`finalize_${reason}`, { silent: true });
        }
        const timing = written.kind === 'written' ? written.run.steps[target.stepId] : undefined;
        const durationMs = timing?.outputs.execution?.timing?.durationMs;
        if (typeof durationMs === 'number') {
          this.metrics?.stepDurationSeconds?.observe(
            { stepType: this.stepType, status: decision.status },
            durationMs / 1000,
          );
        }
        const status = decision.status;
        const error = outcome.status === 'SUCCEEDED' ? undefined : outcome.error;
        return await this.reportFinal(target, {
          status,
          attempt: completion.attempt,
          ...(error === undefined ? {} : { error }),
          kind:
            status === 'SUCCEEDED'
              ? completion.recovered === true
                ? 'recovered'
                : 'executed'
              : 'failed',
          ...(completion.tries === undefined ? {} : { tries: completion.tries }),
          ...(completion.recovered === true ? { recovered: true } : {}),
          ...(completion.recoveredVia === undefined
            ? {}
            : { recoveredVia: completion.recoveredVia }),
          ...(typeof durationMs === 'number' ? { durationMs } : {}),
          cause: completion.cause,
        });
      } catch (error) {
        if (error instanceof ConflictRetriesExhaustedError) throw error;
        // A handler's outputs that the store cannot take (bad field names, non-JSON values):
        // the step fails with a clear error instead of the message looping.
        if (
          !fallbackUsed &&
          (error instanceof InvalidRequestError ||
            error instanceof InvalidRunPatchError ||
            error instanceof InvalidRunDocumentError)
        ) {
          fallbackUsed = true;
          this.log('error', 'step_failed', {
            reason: 'unstorable_outputs',
            error: describeError(error),
          });
          outcome = {
            status: 'FAILED',
            error: errorInfo(
              'INTERNAL_ERROR',
              `handler outputs could not be stored (${safeName(error)})`,
              { errorClass: safeName(error) },
            ),
            execution: { worker: this.owner },
          };
          continue;
        }
        if (tries >= this.policy.infraMaxTries) throw error;
        this.log('warn', 'step_finalize_conflict', {
          reason: 'store_error',
          tries,
          error: describeError(error),
        });
        await abortableSleep(
          exponentialDelayMs(tries, this.policy.infraBaseDelayMs, Number.POSITIVE_INFINITY),
        );
      }
    }
  }

  /** Logs the final step line and publishes the step event (AFTER the finalize write). */
  private async reportFinal(
    target: Target,
    final: {
      status: StepStatus;
      attempt: number;
      error?: ErrorInfo;
      kind: HarnessOutcome['kind'];
      tries?: number;
      recovered?: boolean;
      recoveredVia?: 'handler' | 'artifact';
      durationMs?: number;
      cause?: unknown;
    },
  ): Promise<HarnessOutcome> {
    this.metrics?.stepOutcomes?.inc({
      stepType: this.stepType,
      status: final.status,
      errorCode: final.error?.code ?? 'none',
    });
    const published = await this.publishStepEvent(target, final.status, final.attempt, final.error);
    const fields: Record<string, unknown> = {
      status: final.status,
      ...(final.tries === undefined ? {} : { tries: final.tries }),
      ...(final.durationMs === undefined ? {} : { durationMs: final.durationMs }),
      ...(final.recovered === true ? { recoveredFromArtifact: true } : {}),
      ...(final.recoveredVia === undefined ? {} : { recoveredVia: final.recoveredVia }),
      stepEventPublished: published,
    };
    if (final.status === 'SUCCEEDED') {
      this.log('info', final.kind === 'recovered' ? 'step_recovered' : 'step_succeeded', fields);
    } else {
      this.log(
        final.status === 'CANCELLED' ? 'info' : 'warn',
        final.status === 'CANCELLED' ? 'step_cancelled' : 'step_failed',
        {
          ...fields,
          errorCode: final.error?.code,
          ...(final.cause === undefined || isTdaError(final.cause)
            ? {}
            : { error: describeError(final.cause) }),
        },
      );
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
  private async publishStepEvent(
    target: Target,
    status: StepStatus,
    attempt: number,
    error?: ErrorInfo,
  ): Promise<boolean> {
    const message = {
      runId: target.runId,
      stepId: target.stepId,
      stepType: target.stepType,
      status,
      attempt,
      at: this.clock().toISOString(),
      ...(error === undefined ? {} : { errorCode: error.code }),
    };
    for (let tries = 1; ; tries += 1) {
      try {
        await this.events.publishStepEvent(message);
        return true;
      } catch (publishError) {
        if (tries >= this.policy.infraMaxTries) {
          this.log('error', 'step_event_publish_failed', {
            ok: false,
            messageType: 'step_event',
            tries,
            error: describeError(publishError),
          });
          return false;
        }
        await abortableSleep(
          exponentialDelayMs(tries, this.policy.infraBaseDelayMs, Number.POSITIVE_INFINITY),
        );
      }
    }
  }

  // -- helpers -------------------------------------------------------------------------------

  private retryOptions(maxAttempts: number = this.policy.claimMaxAttempts): UpdateWithRetryOptions {
    return { maxAttempts, ...(this.random === undefined ? {} : { random: this.random }) };
  }

  /** updateWithRetry + conflict logging/metrics; ConflictRetriesExhaustedError propagates. */
  private async conditionalWrite<R>(
    phase: 'claim' | 'finalize',
    target: Target,
    decide: (run: FlowRun, version: string) => UpdateDecision<R>,
  ): Promise<UpdateOutcome<R>> {
    try {
      const outcome = await updateWithRetry(this.store, target.runId, decide, this.retryOptions());
      if (outcome.kind !== 'not_found' && outcome.attempts > 1) {
        this.metrics?.storeConflicts?.inc({ stepType: this.stepType, phase }, outcome.attempts - 1);
        this.log('info', phase === 'claim' ? 'step_claim_conflict' : 'step_finalize_conflict', {
          reason: 'version_conflict',
          attempts: outcome.attempts,
          resolvedAs: outcome.kind,
        });
      }
      return outcome;
    } catch (error) {
      if (error instanceof ConflictRetriesExhaustedError) {
        this.metrics?.storeConflicts?.inc({ stepType: this.stepType, phase }, error.attempts);
        if (phase === 'claim') {
          this.metrics?.stepClaims?.inc({ stepType: this.stepType, result: 'conflict' });
        }
        this.log('warn', phase === 'claim' ? 'step_claim_conflict' : 'step_finalize_conflict', {
          reason: 'conflict_retries_exhausted',
          attempts: error.attempts,
          action: 'nack',
        });
      }
      throw error;
    }
  }

  private noop(
    reason: string,
    fields: Record<string, unknown> & { silent?: boolean } = {},
  ): HarnessOutcome {
    const { silent, ...rest } = fields;
    if (silent !== true) this.log('info', 'step_noop', { reason, ...rest });
    return { action: 'ack', kind: 'noop', reason };
  }

  private count(outcome: HarnessOutcome): HarnessOutcome {
    this.metrics?.stepDeliveries?.inc({
      stepType: this.stepType,
      outcome: outcome.kind,
      status: outcome.status ?? '',
    });
    return outcome;
  }

  private log(level: LogLevel, event: LogEvent, fields: Record<string, unknown> = {}): void {
    logEvent(this.logger, level, event, { ...fields, worker: this.owner });
  }
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

/** Milliseconds of a stored timestamp; undefined when absent or unparseable. */
function parseTime(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}
