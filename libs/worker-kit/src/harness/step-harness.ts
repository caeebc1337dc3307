import type { ArtifactStore } from '@tda/artifacts';
import { validate, type StepType, type Timeframe, type ValidationIssue } from '@tda/contracts';
import { assertWorkerIdentity, isStorageSafeStepId } from '@tda/flow-engine';
import type { FlowRunStore, StepCheckpointStore } from '@tda/flow-store';
import { BrokerPublisher, type Publisher } from '@tda/messaging';
import { sanitizeForLog, withLogContext, type Logger } from '@tda/observability';
import { abortableSleep } from '../abortable';
import { stepArtifactUri } from '../artifact-naming';
import type { StepHarnessMetrics } from '../harness-metrics';
import type { HarnessOutcome } from '../harness-outcome';
import { resolveHarnessPolicy, type StepHarnessPolicy } from '../harness-policy';
import { HarnessShutdownError } from '../harness.errors';
import type { AnyStepHandler } from '../step-handler';
import { stepTypeRegistry, type StepTypeRegistry } from '@tda/step-types';
import { Admission } from './admission';
import { Execution } from './execution';
import { Finalizer } from './finalizer';
import type { HarnessIo } from './harness-io';
import { HarnessLog } from './harness-log';
import { Recovery } from './recovery';
import type { BudgetLease, StepBudget } from './step-budget';
import { attemptOf, noopEnd, type DeliveryMeta, type StepEnd, type StepTarget } from './step-end';
import { StepWrites } from './step-writes';

export type { DeliveryMeta } from './step-end';

export interface StepHarnessOptions {
  handler: AnyStepHandler;
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
  /** The step types whose artifacts upstream reads validate (default: every registered one). */
  registry?: StepTypeRegistry;
  /** Where handlers' checkpoints go (ctx.checkpoint); usually the run store itself. */
  checkpoints?: StepCheckpointStore;
}

/**
 * The step harness (DESIGN.md §5 step 3): everything a worker does with a step-ready message
 * except the business logic, which is the AnyStepHandler's. One harness per step type, in phases
 * with one exit: admission (message, executable check, claim or takeover) → recovery check →
 * execution (redelivery bound, run deadline, inputs, the handler under its budget, artifacts) →
 * the Finalizer (finalize write, step event, the ack outcome). Returns an ack outcome for
 * everything decided (FAILED steps and no-ops included) and THROWS for transient infrastructure
 * failures so the transport nacks. See README.md for the rules.
 */
export class StepHarness {
  readonly stepType: StepType;
  readonly owner: string;
  readonly policy: StepHarnessPolicy;
  private readonly artifacts: ArtifactStore;
  private readonly primaryUri: (target: StepTarget, timeframe: Timeframe | undefined) => string;
  private readonly metrics: StepHarnessMetrics | undefined;
  private readonly log: HarnessLog;
  private readonly admission: Admission;
  private readonly recovery: Recovery;
  private readonly execution: Execution;
  private readonly finalizer: Finalizer;
  /** `runId/stepId` of every delivery being processed here: in-process duplicates are no-ops. */
  private readonly inProcess = new Set<string>();
  /** The budgets of running handlers and recoveries (aborted on shutdown). */
  private readonly live = new Set<StepBudget>();
  private readonly running = new Set<Promise<unknown>>();
  private shuttingDown = false;

  constructor(options: StepHarnessOptions) {
    const { handler } = options;
    this.stepType = handler.descriptor.stepType;
    // Step-level defaults (timeout, lease, attempts, retries) come from the step type's policy.
    this.policy = resolveHarnessPolicy(options.policy, handler.descriptor.policy);
    assertWorkerIdentity(options.owner, this.policy.leaseMs);
    this.owner = options.owner;
    this.artifacts = options.artifacts;
    this.metrics = options.metrics;
    this.log = new HarnessLog(options.logger, this.owner);
    const clock = options.clock ?? (() => new Date());
    const common = { stepType: this.stepType, owner: this.owner, clock, log: this.log };
    const io = this.io(options, clock);
    this.primaryUri = (target, timeframe) => io.artifactUri(target, timeframe)();
    const writes = new StepWrites({
      ...common,
      store: options.store,
      maxAttempts: this.policy.claimMaxAttempts,
      ...(options.random === undefined ? {} : { random: options.random }),
      ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    });
    const metrics = options.metrics === undefined ? {} : { metrics: options.metrics };
    this.admission = new Admission({
      ...common,
      ...metrics,
      writes,
      artifacts: options.artifacts,
      policy: this.policy,
      primaryUri: this.primaryUri,
    });
    this.recovery = new Recovery({
      ...io,
      timeoutMs: this.policy.timeoutMs,
      maxDeliveryAttempts: this.policy.maxDeliveryAttempts,
      log: this.log,
    });
    this.execution = new Execution({
      ...io,
      ...metrics,
      log: this.log,
      policy: this.policy,
      lease: (target) => this.lease(target, writes, options),
    });
    this.finalizer = new Finalizer({
      ...common,
      ...metrics,
      writes,
      events: new BrokerPublisher({
        publisher: options.publisher,
        prefix: this.policy.topicPrefix,
        logger: options.logger,
      }),
      infraMaxTries: this.policy.infraMaxTries,
      infraBaseDelayMs: this.policy.infraBaseDelayMs,
    });
  }

  /** Steps executing (or being recovered) in this harness right now. */
  get activeCount(): number {
    return this.inProcess.size;
  }

  async handleStepReady(body: unknown, meta: DeliveryMeta): Promise<HarnessOutcome> {
    if (this.shuttingDown) throw new HarnessShutdownError();
    const parsed = validate.stepReady(body);
    const work = parsed.ok
      ? this.process({ ...parsed.value, meta })
      : Promise.resolve(this.finalizer.settle(rejected(body, parsed.issues)));
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
    for (const budget of this.live) budget.abort({ kind: 'shutdown' });
    await Promise.allSettled([...this.running]);
  }

  private process(target: StepTarget): Promise<HarnessOutcome> {
    const { runId, stepId, stepType, meta } = target;
    const context = {
      runId,
      stepId,
      stepType,
      deliveryAttempt: meta.deliveryAttempt,
      messageId: meta.messageId,
    };
    return withLogContext(context, async () => {
      if (stepType !== this.stepType) {
        return this.finalizer.settle(
          noopEnd('step_type_mismatch', { handlerStepType: this.stepType }),
        );
      }
      const key = `${runId}/${stepId}`;
      // Serialise deliveries of one step inside this process: a duplicate that arrives while
      // the first copy is claiming or executing is acked without a single read.
      if (this.inProcess.has(key)) return this.finalizer.settle(noopEnd('duplicate_in_process'));
      this.inProcess.add(key);
      try {
        const end = await this.decide(target);
        const attempt = attemptOf(end);
        return await (attempt === undefined
          ? this.finalizer.finish(target, end)
          : withLogContext({ attempt }, () => this.finalizer.finish(target, end)));
      } finally {
        this.inProcess.delete(key);
      }
    });
  }

  /** Admission → recovery check → execution: what this delivery does with the step. */
  private async decide(target: StepTarget): Promise<StepEnd> {
    let admitted = await this.admission.admit(target);
    if (admitted.kind === 'recover') {
      const { claimed, primaryUri } = admitted;
      const recovered = await this.recovery.recover(target, claimed, primaryUri, 'takeover');
      if (recovered !== 'execute') return recovered;
      // Refused by recovery: take the step over and execute it again.
      admitted = await this.admission.takeover(target, true);
    }
    if (admitted.kind === 'end') return admitted.end;
    if (admitted.kind === 'recover') return noopEnd('takeover_not_possible');
    const { claimed } = admitted;
    return withLogContext({ attempt: claimed.attempt }, async () => {
      this.log.info('step_claimed', {
        via: claimed.via,
        leaseExpiresAt: claimed.step.lease?.expiresAt,
      });
      // DESIGN §5.3: after the claim, the recovery check. A READY step may have been reclaimed
      // after an attempt that wrote its artifact but crashed before the finalize (seed 002
      // "output written but Firestore update failed"): finalize from it, do not redo the work.
      if (!claimed.artifactChecked) {
        const uri = this.primaryUri(target, claimed.step.timeframe);
        if (await this.artifacts.exists(uri)) {
          const recovered = await this.recovery.recover(target, claimed, uri, 'owner');
          if (recovered !== 'execute') return recovered;
        }
      }
      return this.execution.run(target, claimed);
    });
  }

  /** The heartbeat settings of one claimed step (its budget's LeaseKeeper). */
  private lease(target: StepTarget, writes: StepWrites, options: StepHarnessOptions): BudgetLease {
    return {
      store: writes.store,
      runId: target.runId,
      stepId: target.stepId,
      stepType: this.stepType,
      owner: this.owner,
      leaseMs: this.policy.leaseMs,
      heartbeatMs: this.policy.heartbeatMs,
      logger: options.logger,
      retry: writes.retry,
      ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    };
  }

  /** What recovery and execution share: adapters, naming, the writer's retry settings. */
  private io(options: StepHarnessOptions, clock: () => Date): HarnessIo {
    const { policy } = this;
    return {
      handler: options.handler,
      artifacts: options.artifacts,
      registry: options.registry ?? stepTypeRegistry(),
      owner: this.owner,
      checkpoints: options.checkpoints,
      clock,
      live: this.live,
      artifactUri:
        (target: StepTarget, timeframe: Timeframe | undefined) =>
        (suffix = policy.primaryArtifactSuffix) =>
          stepArtifactUri(
            {
              bucket: policy.artifactBucket,
              prefix: policy.artifactPrefix,
              runId: target.runId,
              stepId: target.stepId,
              ...(timeframe === undefined ? {} : { timeframe }),
            },
            suffix,
          ),
      writer: {
        artifacts: options.artifacts,
        maxTries: policy.artifactWriteMaxTries,
        baseDelayMs: policy.artifactWriteBaseDelayMs,
        sleep: abortableSleep,
      },
    };
  }

  private count(outcome: HarnessOutcome): HarnessOutcome {
    this.metrics?.stepDeliveries?.inc({
      stepType: this.stepType,
      outcome: outcome.kind,
      status: outcome.status ?? '',
    });
    return outcome;
  }
}

/**
 * A message that is not a step-ready message. A stepId that cannot be a Firestore field-path
 * segment / object name means the run is broken (FLOW_RUN_INVALID, seed 001): nothing can be
 * patched under that id, so it is acked and logged, never redelivered.
 */
function rejected(
  body: unknown,
  issues: readonly ValidationIssue[],
): Extract<StepEnd, { kind: 'invalid' }> {
  const stepId =
    typeof body === 'object' && body !== null
      ? (body as Record<string, unknown>)['stepId']
      : undefined;
  if (typeof stepId === 'string' && !isStorageSafeStepId(stepId)) {
    return {
      kind: 'invalid',
      reason: 'unsafe_step_id',
      errorCode: 'FLOW_RUN_INVALID',
      issues: sanitizeForLog(issues),
      fields: { stepId: sanitizeForLog(stepId, { maxStringLength: 64 }) },
    };
  }
  return { kind: 'invalid', reason: 'invalid_message', issues: sanitizeForLog(issues) };
}
