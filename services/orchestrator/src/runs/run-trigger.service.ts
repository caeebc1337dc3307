import { Inject, Injectable } from '@nestjs/common';
import { validate, type FlowRun, type TriggerRequest } from '@tda/contracts';
import {
  InvalidRequestError,
  isTerminalRunStatus,
  runDeadlineWindowMs,
  type FlowCatalogue,
} from '@tda/flow-engine';
import type { FlowRunStore } from '@tda/flow-store';
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
import { KeyedMutex } from './keyed-mutex';
import { RunAdmission } from './run-admission.service';
import { logRunCreated } from './run-created.log';
import { RunPreflight, TRIGGER_RESOLVED_SCOPE_FIELDS } from './run-preflight.service';

export const DEFAULT_TRIGGER = { type: 'USER', source: 'orchestrator-api' } as const;

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
function comparableScope(existing: FlowRun, request: FlowRun): FlowRun['scope'] {
  const scope: Record<string, unknown> = { ...existing.scope };
  for (const field of TRIGGER_RESOLVED_SCOPE_FIELDS) {
    if (!Object.hasOwn(request.scope, field)) delete scope[field];
  }
  return scope as FlowRun['scope'];
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
    @Inject(FLOW_CATALOGUE) private readonly catalogue: Pick<FlowCatalogue, 'createRun'>,
    @Inject(ORCHESTRATOR_CONFIG)
    private readonly config: Pick<OrchestratorConfig, 'TDA_DEFAULT_RUN_DEADLINE_SECONDS'>,
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
    const request = checked.value;
    const key = request.idempotencyKey;
    if (key === undefined) {
      const run = await this.buildRun(request, ownerId);
      await this.admission.createWithinQuota(ownerId, () => this.create(run));
      return { run: await this.admission.admitCreated(run, 'trigger'), created: true };
    }
    return this.triggerLocks.run(`${ownerId}\u0000${key}`, () =>
      this.triggerIdempotent(request, ownerId, key),
    );
  }

  // ---------------------------------------------------------------------------------------------

  /**
   * The run as the catalogue builds it from the request alone (pure; a bad request throws
   * InvalidRequestError here, before any I/O). Its scope lacks what the trigger resolves.
   */
  private draftRun(request: TriggerRequest, ownerId: string, now = this.clock()): FlowRun {
    const defaultDeadline = this.config.TDA_DEFAULT_RUN_DEADLINE_SECONDS;
    const deadlineSeconds =
      request.deadlineSeconds ?? (defaultDeadline > 0 ? defaultDeadline : undefined);
    return this.catalogue.createRun({
      flowKey: request.flowKey,
      scope: request.scope,
      ownerId,
      trigger: request.trigger ?? { ...DEFAULT_TRIGGER },
      ...(request.idempotencyKey === undefined ? {} : { idempotencyKey: request.idempotencyKey }),
      ...(deadlineSeconds === undefined ? {} : { deadlineSeconds }),
      now,
      random: this.random,
    });
  }

  /** The run to create: the draft rebuilt with the scope the preflight resolved (asOf, refs). */
  private async buildRun(request: TriggerRequest, ownerId: string): Promise<FlowRun> {
    const now = this.clock();
    const draft = this.draftRun(request, ownerId, now);
    const scope = await this.preflight.resolveScope(draft, ownerId);
    return this.draftRun({ ...request, scope }, ownerId, now);
  }

  private async triggerIdempotent(
    request: TriggerRequest,
    ownerId: string,
    key: string,
  ): Promise<TriggerResult> {
    // Built first: a bad request is a 400 whether or not the key was used before.
    const probe = this.draftRun(request, ownerId);
    const existing = await this.idempotencyKeys.firstRunWithKey(ownerId, key);
    if (existing !== undefined) {
      this.assertSameRequest(existing, probe);
      return { run: await this.replay(existing), created: false };
    }
    // Rebuilt so that createdAt (which orders racing duplicates) is as close to the write as
    // possible, not one lookup earlier.
    const candidate = await this.buildRun(request, ownerId);
    await this.admission.createWithinQuota(ownerId, () => this.create(candidate));
    const first = await this.idempotencyKeys.firstRunWithKey(ownerId, key);
    if (first !== undefined && first.runId !== candidate.runId) {
      // Another instance created a run for this key between our lookup and our create.
      await this.idempotencyKeys.discardDuplicate(candidate.runId, first.runId);
      this.assertSameRequest(first, probe);
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
   * `candidate` was built from the repeated request, so its window is the requested deadline.
   */
  private assertSameRequest(existing: FlowRun, candidate: FlowRun): void {
    const conflict = (field: string, more: Record<string, unknown> = {}): RunConflictError =>
      new RunConflictError(
        `idempotencyKey '${String(candidate.idempotencyKey)}' was already used for a different request (run '${existing.runId}'): its ${field} differs`,
        { runId: existing.runId, idempotencyKey: candidate.idempotencyKey, field, ...more },
      );
    if (existing.flowKey !== candidate.flowKey) throw conflict('flowKey');
    if (canonicalJson(comparableScope(existing, candidate)) !== canonicalJson(candidate.scope)) {
      throw conflict('scope');
    }
    const seconds = (run: FlowRun): number | null => {
      const window = runDeadlineWindowMs(run);
      return window === undefined ? null : window / 1000;
    };
    const requested = seconds(candidate);
    const stored = seconds(existing);
    if (requested !== stored) {
      throw conflict('deadlineSeconds', { requested, existing: stored });
    }
  }
}
