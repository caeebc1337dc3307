import { Inject, Injectable } from '@nestjs/common';
import { validate, type FlowRun, type RunScope, type TriggerRequest } from '@tda/contracts';
import {
  InvalidRequestError,
  isTerminalRunStatus,
  runDeadlineWindowMs,
  type FlowCatalogue,
  type FlowPlan,
} from '@tda/flow-engine';
import { KeyedMutex, type FlowRunStore } from '@tda/flow-store';
import { describeError, logEvent, type Logger } from '@tda/observability';
import type { OrchestratorConfig } from '../config';
import { advanceDecision } from '../dispatch/advance.decision';
import { RunWriter } from '../dispatch/run-writer.service';
import { RunConflictError } from '../orchestrator.errors';
import {
  CLOCK,
  FLOW_CATALOGUE,
  LOGGER,
  ORCHESTRATOR_CONFIG,
  RANDOM,
  RUN_STORE,
  type Clock,
  type RandomSource,
} from '../orchestrator.tokens';
import { IdempotencyKeys } from './idempotency-keys.service';
import { RunAdmission } from './run-admission.service';
import { logRunCreated } from './run-created.log';
import { RunPreflight, TRIGGER_RESOLVED_SCOPE_FIELDS } from './run-preflight.service';

export const DEFAULT_TRIGGER = { type: 'USER', source: 'orchestrator-api' } as const;

/** A trigger request as its flow planned it, with the effective deadline. */
interface PlannedRequest extends FlowPlan {
  deadlineSeconds: number | null;
}

export interface TriggerResult {
  run: FlowRun;
  /** false: the idempotency key matched an existing run and nothing was created. */
  created: boolean;
}

/** JSON with object keys sorted: scope equality must not depend on key order after storage. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/**
 * The stored scope as the repeated request would state it: a field the trigger resolved (asOf
 * "the newest candle", the latest reports) counts only when the request itself named it, so a
 * retry minutes later is the same request even though "newest" has moved on.
 */
function comparableScope(existing: FlowRun, requested: RunScope): RunScope {
  const scope: Record<string, unknown> = { ...existing.scope };
  for (const field of TRIGGER_RESOLVED_SCOPE_FIELDS) {
    if (!Object.hasOwn(requested, field)) delete scope[field];
  }
  return scope as RunScope;
}

/**
 * POST /runs: quota check + create + admission, idempotent per owner and key. Runs start only
 * through RunAdmission (README "Queued runs and quotas").
 */
@Injectable()
export class RunTrigger {
  private readonly triggerLocks = new KeyedMutex();

  constructor(
    @Inject(RUN_STORE) private readonly store: Pick<FlowRunStore, 'create'>,
    private readonly writer: RunWriter,
    private readonly admission: RunAdmission,
    private readonly idempotencyKeys: IdempotencyKeys,
    private readonly preflight: RunPreflight,
    @Inject(FLOW_CATALOGUE) private readonly catalogue: Pick<FlowCatalogue, 'createRun' | 'plan'>,
    @Inject(ORCHESTRATOR_CONFIG)
    private readonly config: Pick<
      OrchestratorConfig,
      'TDA_DEFAULT_RUN_DEADLINE_SECONDS' | 'TDA_MAX_DYNAMIC_STEPS' | 'TDA_MAX_EXPANSION_DEPTH'
    >,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(RANDOM) private readonly random: RandomSource,
  ) {}

  /**
   * POST /runs. Validates the body against the contract, builds the run from the catalogue
   * (unknown flowKey / bad scope -> InvalidRequestError before anything is written), refuses it
   * with QuotaExceededError (429) when the owner has TDA_MAX_ACTIVE_RUNS_PER_OWNER active runs,
   * creates it create-only (PENDING) and runs an admission pass: within the running limits it
   * starts (first steps READY, step-ready published), otherwise it stays PENDING, queued.
   *
   * Idempotency (README "Idempotency"): triggers with the same (owner, key) are serialized in
   * this process, look for an existing run first, and after creating re-check for an older run
   * with the key; if one exists the new run is cancelled as a duplicate (before anything was
   * dispatched) and the older one is returned.
   */
  async trigger(body: unknown, ownerId: string): Promise<TriggerResult> {
    const checked = validate.triggerRequest(body);
    if (!checked.ok) {
      throw new InvalidRequestError('invalid trigger request', { issues: checked.issues });
    }
    const { trigger } = checked.value;
    if (trigger?.scheduleId !== undefined || trigger?.slotAt !== undefined) {
      throw new InvalidRequestError(
        'trigger.scheduleId and trigger.slotAt are set by schedules only',
        {
          field: 'trigger',
        },
      );
    }
    return this.triggerRequest(checked.value, ownerId);
  }

  /**
   * A schedule's slot (flow 7): the same checks and idempotency as POST /runs, with the slot's
   * idempotency key, so firing a slot twice (two instances, a retried Cloud Scheduler call, a
   * restart) returns the one run of that slot.
   */
  triggerScheduled(request: TriggerRequest, ownerId: string): Promise<TriggerResult> {
    return this.triggerRequest(request, ownerId);
  }

  private async triggerRequest(request: TriggerRequest, ownerId: string): Promise<TriggerResult> {
    const key = request.idempotencyKey;
    if (key === undefined) {
      const run = await this.buildRun(request, this.plan(request), ownerId);
      await this.admission.createWithinQuota(ownerId, () => this.create(run));
      return { run: await this.admission.admitCreated(run, 'trigger'), created: true };
    }
    return this.triggerLocks.run(`${ownerId}\u0000${key}`, () =>
      this.triggerIdempotent(request, ownerId, key),
    );
  }

  // ---------------------------------------------------------------------------------------------

  private deadlineSeconds(request: TriggerRequest): number | undefined {
    const defaultDeadline = this.config.TDA_DEFAULT_RUN_DEADLINE_SECONDS;
    return request.deadlineSeconds ?? (defaultDeadline > 0 ? defaultDeadline : undefined);
  }

  /**
   * What the request asks for, checked by the flow alone (pure; a bad request throws
   * InvalidRequestError here, before any I/O): the identity of the request for idempotency.
   */
  private plan(request: TriggerRequest): PlannedRequest {
    const plan = this.catalogue.plan(request.flowKey, request.scope);
    const deadline = this.deadlineSeconds(request);
    return { ...plan, deadlineSeconds: deadline ?? null };
  }

  /** The run to create: built from the request plus what the preflight resolved (asOf, refs). */
  private async buildRun(
    request: TriggerRequest,
    plan: PlannedRequest,
    ownerId: string,
  ): Promise<FlowRun> {
    const resolved = await this.preflight.resolve(plan, request.scope, ownerId);
    const deadlineSeconds = this.deadlineSeconds(request);
    return this.catalogue.createRun({
      flowKey: request.flowKey,
      scope: { ...request.scope, ...resolved },
      ownerId,
      trigger: request.trigger ?? { ...DEFAULT_TRIGGER },
      ...(request.idempotencyKey === undefined ? {} : { idempotencyKey: request.idempotencyKey }),
      ...(deadlineSeconds === undefined ? {} : { deadlineSeconds }),
      expansionLimits: {
        maxDynamicSteps: this.config.TDA_MAX_DYNAMIC_STEPS,
        maxDepth: this.config.TDA_MAX_EXPANSION_DEPTH,
      },
      now: this.clock(),
      random: this.random,
    });
  }

  private async triggerIdempotent(
    request: TriggerRequest,
    ownerId: string,
    key: string,
  ): Promise<TriggerResult> {
    // Planned first: a bad request is a 400 whether or not the key was used before.
    const probe = this.plan(request);
    const existing = await this.idempotencyKeys.firstRunWithKey(ownerId, key);
    if (existing !== undefined) {
      this.assertSameRequest(existing, probe, key);
      return { run: await this.replay(existing), created: false };
    }
    // Rebuilt so that createdAt (which orders racing duplicates) is as close to the write as
    // possible, not one lookup earlier.
    const candidate = await this.buildRun(request, probe, ownerId);
    await this.admission.createWithinQuota(ownerId, () => this.create(candidate));
    const first = await this.idempotencyKeys.firstRunWithKey(ownerId, key);
    if (first !== undefined && first.runId !== candidate.runId) {
      // Another instance created a run for this key between our lookup and our create.
      await this.idempotencyKeys.discardDuplicate(candidate.runId, first.runId);
      this.assertSameRequest(first, probe, key);
      return { run: await this.replay(first), created: false };
    }
    return { run: await this.admission.admitCreated(candidate, 'trigger'), created: true };
  }

  private async create(run: FlowRun): Promise<void> {
    await this.store.create(run);
    logRunCreated(this.logger, run);
  }

  /**
   * A retried trigger also finishes what a crashed first attempt left undone: a PENDING run
   * goes through admission (it may still have to wait), a RUNNING one is advanced.
   */
  private async replay(run: FlowRun): Promise<FlowRun> {
    if (isTerminalRunStatus(run.status)) return run;
    if (run.status === 'PENDING') return this.admission.admitCreated(run, 'idempotent_replay');
    try {
      // Any failure, a publish one too ('throw'), answers with the run as found (logged).
      const outcome = await this.writer.apply(
        run.runId,
        (read, now) => advanceDecision(read, now),
        'idempotent_replay',
        'throw',
      );
      return outcome.kind === 'not_found' ? run : outcome.run;
    } catch (error) {
      logEvent(
        this.logger,
        'warn',
        'dispatch_failed',
        { runId: run.runId, cause: 'idempotent_replay', error: describeError(error) },
        'advance on idempotent replay failed; the reconciler will retry',
      );
      return run;
    }
  }

  /**
   * A key names one request: the same flowKey, scope and effective deadline (`deadlineSeconds`,
   * else the configured default) as the run it created; anything else is a 409 naming the field.
   */
  private assertSameRequest(existing: FlowRun, request: PlannedRequest, key: string): void {
    const conflict = (field: string, more: Record<string, unknown> = {}): RunConflictError =>
      new RunConflictError(
        `idempotencyKey '${key}' was already used for a different request (run '${existing.runId}'): its ${field} differs`,
        { runId: existing.runId, idempotencyKey: key, field, ...more },
      );
    if (existing.flowKey !== request.flowKey) throw conflict('flowKey');
    if (canonicalJson(comparableScope(existing, request.scope)) !== canonicalJson(request.scope)) {
      throw conflict('scope');
    }
    const window = runDeadlineWindowMs(existing);
    const stored = window === undefined ? null : window / 1000;
    if (request.deadlineSeconds !== stored) {
      throw conflict('deadlineSeconds', { requested: request.deadlineSeconds, existing: stored });
    }
  }
}
