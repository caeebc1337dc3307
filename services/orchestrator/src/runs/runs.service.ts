import { Inject, Injectable } from '@nestjs/common';
import { validate, type FlowRun, type TriggerRequest } from '@tda/contracts';
import {
  blockedOn,
  InvalidRequestError,
  isTerminalRunStatus,
  requestCancel,
  runDeadlineWindowMs,
  type BlockedOnExplanation,
  type CancelDecision,
} from '@tda/flow-engine';
import { RunNotFoundError, updateWithRetry, type RunListPage } from '@tda/flow-store';
import { describeError, logEvent } from '@tda/observability';
import { RunAdvancer } from '../dispatch/run-advancer.service';
import { RunConflictError } from '../orchestrator.errors';
import { ORCHESTRATOR_CONTEXT, type OrchestratorContext } from '../orchestrator.options';
import { discardDuplicate, firstRunWithKey } from './idempotency-key';
import { KeyedMutex } from './keyed-mutex';
import { assertRunId, assertStepIdParam } from './path-ids';
import { RunAdmission } from './run-admission.service';
import { parseRunListQuery } from './run-list-query';

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
 * The admin API's use cases: trigger (quota check + create + admission, idempotent per owner and
 * key), read, list, cancel, blocked-on. The orchestrator is the only writer of run-level fields
 * (DESIGN §3); every write is read -> pure decision -> conditional update. Runs start only
 * through RunAdmission (README "Queued runs and quotas").
 */
@Injectable()
export class RunsService {
  private readonly triggerLocks = new KeyedMutex();

  constructor(
    @Inject(ORCHESTRATOR_CONTEXT) private readonly context: OrchestratorContext,
    private readonly advancer: RunAdvancer,
    private readonly admission: RunAdmission,
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
      const run = this.buildRun(request, ownerId);
      await this.admission.createWithinQuota(ownerId, () => this.create(run));
      return { run: await this.admission.admitCreated(run, 'trigger'), created: true };
    }
    return this.triggerLocks.run(`${ownerId}\u0000${key}`, () =>
      this.triggerIdempotent(request, ownerId, key),
    );
  }

  async get(runId: string): Promise<FlowRun> {
    assertRunId(runId);
    const found = await this.context.store.get(runId);
    if (found === null) throw new RunNotFoundError(runId);
    return found.run;
  }

  list(rawQuery: Readonly<Record<string, unknown>>): Promise<RunListPage> {
    return this.context.store.list(parseRunListQuery(rawQuery));
  }

  /**
   * Idempotent cancel (DESIGN §5.5): one write sets cancelRequestedAt, the run CANCELLED and its
   * PENDING/READY steps CANCELLED; RUNNING steps see it on their next heartbeat. Already
   * CANCELLED -> the run unchanged; SUCCEEDED/FAILED -> RunConflictError (409).
   */
  async cancel(runId: string): Promise<FlowRun> {
    assertRunId(runId);
    const outcome = await updateWithRetry<{ run: FlowRun; decision: CancelDecision }>(
      this.context.store,
      runId,
      (run) => {
        const decision = requestCancel(run, this.context.clock());
        return decision.kind === 'noop'
          ? { kind: 'noop', reason: decision.reason, result: { run, decision } }
          : { kind: 'write', patch: decision.patch, result: { run, decision } };
      },
      { random: this.context.random },
    );
    if (outcome.kind === 'not_found') throw new RunNotFoundError(runId);
    if (outcome.kind === 'written') {
      const { decision } = outcome.result;
      if (decision.kind === 'cancel')
        this.advancer.logAdvanced(outcome.run, decision.advance, 'cancel');
      // A RUNNING run freed its slot; a queued one moved the runs behind it up.
      await this.admission.admitQueuedSafely('cancel');
      return outcome.run;
    }
    const { run } = outcome.result;
    if (run.status === 'SUCCEEDED' || run.status === 'FAILED') {
      throw new RunConflictError(`run '${runId}' already finished as ${run.status}`, {
        runId,
        status: run.status,
      });
    }
    return run;
  }

  async blockedOn(runId: string, stepId: string): Promise<BlockedOnExplanation> {
    assertStepIdParam(stepId);
    const run = await this.get(runId);
    const queue = run.status === 'PENDING' ? await this.admission.queueEntry(runId) : undefined;
    return blockedOn(run, stepId, this.context.clock(), queue === undefined ? {} : { queue });
  }

  // ---------------------------------------------------------------------------------------------

  private buildRun(request: TriggerRequest, ownerId: string): FlowRun {
    const defaultDeadline = this.context.config.TDA_DEFAULT_RUN_DEADLINE_SECONDS;
    const deadlineSeconds =
      request.deadlineSeconds ?? (defaultDeadline > 0 ? defaultDeadline : undefined);
    return this.context.catalogue.createRun({
      flowKey: request.flowKey,
      scope: request.scope,
      ownerId,
      trigger: request.trigger ?? { ...DEFAULT_TRIGGER },
      ...(request.idempotencyKey === undefined ? {} : { idempotencyKey: request.idempotencyKey }),
      ...(deadlineSeconds === undefined ? {} : { deadlineSeconds }),
      now: this.context.clock(),
      random: this.context.random,
    });
  }

  private async triggerIdempotent(
    request: TriggerRequest,
    ownerId: string,
    key: string,
  ): Promise<TriggerResult> {
    // Built first: a bad request is a 400 whether or not the key was used before.
    const probe = this.buildRun(request, ownerId);
    const existing = await firstRunWithKey(this.context, ownerId, key);
    if (existing !== undefined) {
      this.assertSameRequest(existing, probe);
      return { run: await this.replay(existing), created: false };
    }
    // Rebuilt so that createdAt (which orders racing duplicates) is as close to the write as
    // possible, not one lookup earlier.
    const candidate = this.buildRun(request, ownerId);
    await this.admission.createWithinQuota(ownerId, () => this.create(candidate));
    const first = await firstRunWithKey(this.context, ownerId, key);
    if (first !== undefined && first.runId !== candidate.runId) {
      // Another instance created a run for this key between our lookup and our create.
      await discardDuplicate(this.context, candidate.runId, first.runId);
      this.assertSameRequest(first, candidate);
      return { run: await this.replay(first), created: false };
    }
    return { run: await this.admission.admitCreated(candidate, 'trigger'), created: true };
  }

  private async create(run: FlowRun): Promise<void> {
    await this.context.store.create(run);
    logEvent(this.context.logger, 'info', 'run_created', {
      runId: run.runId,
      flowKey: run.flowKey,
      ownerId: run.ownerId,
      steps: Object.keys(run.steps).length,
      ...(run.idempotencyKey === undefined ? {} : { idempotencyKey: run.idempotencyKey }),
      ...(run.deadlineAt === undefined ? {} : { deadlineAt: run.deadlineAt }),
    });
  }

  /**
   * A retried trigger also finishes what a crashed first attempt left undone: a PENDING run
   * goes through admission (it may still have to wait), a RUNNING one is advanced.
   */
  private async replay(run: FlowRun): Promise<FlowRun> {
    if (isTerminalRunStatus(run.status)) return run;
    if (run.status === 'PENDING') return this.admission.admitCreated(run, 'idempotent_replay');
    try {
      const outcome = await this.advancer.advanceRun(run.runId, { cause: 'idempotent_replay' });
      return outcome.kind === 'not_found' ? run : outcome.run;
    } catch (error) {
      this.context.logger.warn(
        { runId: run.runId, error: describeError(error) },
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
    if (canonicalJson(existing.scope) !== canonicalJson(candidate.scope)) throw conflict('scope');
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
