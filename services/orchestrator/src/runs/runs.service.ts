import { Inject, Injectable } from '@nestjs/common';
import { validate, type ErrorInfo, type FlowRun, type TriggerRequest } from '@tda/contracts';
import {
  blockedOn,
  InvalidRequestError,
  isTerminalRunStatus,
  isValidRunId,
  isStorageSafeStepId,
  requestCancel,
  withAdvance,
  type BlockedOnExplanation,
  type CancelDecision,
} from '@tda/flow-engine';
import {
  LIST_LIMIT_MAX,
  RunNotFoundError,
  updateWithRetry,
  type RunListPage,
} from '@tda/flow-store';
import { describeError, logEvent } from '@tda/observability';
import { RunAdvancer } from '../dispatch/run-advancer.service';
import { RunConflictError } from '../orchestrator.errors';
import { ORCHESTRATOR_CONTEXT, type OrchestratorContext } from '../orchestrator.options';
import { KeyedMutex } from './keyed-mutex';
import { parseRunListQuery } from './run-list-query';

export const DEFAULT_TRIGGER = { type: 'USER', source: 'orchestrator-api' } as const;
/** Bound on the pages read to find the first run of an idempotency key (normally one page). */
const MAX_IDEMPOTENCY_PAGES = 10;

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

/** 400 for a malformed id (never a store lookup with it). */
function assertRunId(runId: string): void {
  const shown = runId.slice(0, 200);
  if (!isValidRunId(runId)) {
    throw new InvalidRequestError(`'${shown}' is not a runId`, {
      parameter: 'runId',
      example: '20260115-100000_BTC-USDT_abc12',
    });
  }
}

/** Older first: createdAt, then runId (the order that decides which duplicate wins). */
function isOlder(a: FlowRun, b: FlowRun): boolean {
  return a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.runId < b.runId);
}

/**
 * The admin API's use cases: trigger (create + advance + dispatch, idempotent per owner and
 * key), read, list, cancel, blocked-on. The orchestrator is the only writer of run-level fields
 * (DESIGN §3); every write is read -> pure decision -> conditional update.
 */
@Injectable()
export class RunsService {
  private readonly triggerLocks = new KeyedMutex();

  constructor(
    @Inject(ORCHESTRATOR_CONTEXT) private readonly context: OrchestratorContext,
    private readonly advancer: RunAdvancer,
  ) {}

  /**
   * POST /runs. Validates the body against the contract, builds the run from the catalogue
   * (unknown flowKey / bad scope -> InvalidRequestError before anything is written), creates it
   * create-only, advances it and publishes step-ready for the first READY steps.
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
      return { run: await this.createAndAdvance(this.buildRun(request, ownerId)), created: true };
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
    const shown = stepId.slice(0, 200);
    if (!isStorageSafeStepId(stepId)) {
      throw new InvalidRequestError(`'${shown}' is not a stepId`, {
        parameter: 'stepId',
      });
    }
    const run = await this.get(runId);
    return blockedOn(run, stepId, this.context.clock());
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
    const existing = await this.firstRunWithKey(ownerId, key);
    if (existing !== undefined) {
      this.assertSameRequest(existing, probe);
      return { run: await this.replay(existing), created: false };
    }
    // Rebuilt so that createdAt (which orders racing duplicates) is as close to the write as
    // possible, not one lookup earlier.
    const candidate = this.buildRun(request, ownerId);
    await this.create(candidate);
    const first = await this.firstRunWithKey(ownerId, key);
    if (first !== undefined && first.runId !== candidate.runId) {
      // Another instance created a run for this key between our lookup and our create.
      await this.discardDuplicate(candidate.runId, first.runId);
      this.assertSameRequest(first, candidate);
      return { run: await this.replay(first), created: false };
    }
    return { run: await this.advanceCreated(candidate), created: true };
  }

  private async createAndAdvance(run: FlowRun): Promise<FlowRun> {
    await this.create(run);
    return this.advanceCreated(run);
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
   * The run exists from here on, so the trigger succeeds even if its first advance or dispatch
   * fails: the reconciler advances PENDING runs and republishes unclaimed READY steps.
   */
  private async advanceCreated(run: FlowRun): Promise<FlowRun> {
    try {
      const outcome = await this.advancer.advanceRun(run.runId, { cause: 'trigger' });
      return outcome.kind === 'not_found' ? run : outcome.run;
    } catch (error) {
      logEvent(
        this.context.logger,
        'warn',
        'dispatch_failed',
        { runId: run.runId, error: describeError(error) },
        'first advance/dispatch failed; the reconciler will retry',
      );
      return (await this.context.store.get(run.runId).catch(() => null))?.run ?? run;
    }
  }

  /** A retried trigger also finishes what a crashed first attempt left undone. */
  private async replay(run: FlowRun): Promise<FlowRun> {
    if (isTerminalRunStatus(run.status)) return run;
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

  /** The oldest run of (owner, key): the one every racing trigger agrees on. */
  private async firstRunWithKey(ownerId: string, key: string): Promise<FlowRun | undefined> {
    let first: FlowRun | undefined;
    let cursor: string | undefined;
    for (let page = 0; page < MAX_IDEMPOTENCY_PAGES; page++) {
      const result = await this.context.store.list({
        ownerId,
        idempotencyKey: key,
        limit: LIST_LIMIT_MAX,
        ...(cursor === undefined ? {} : { cursor }),
      });
      for (const run of result.runs) if (first === undefined || isOlder(run, first)) first = run;
      if (result.nextCursor === null) break;
      cursor = result.nextCursor;
    }
    return first;
  }

  private assertSameRequest(existing: FlowRun, candidate: FlowRun): void {
    if (
      existing.flowKey !== candidate.flowKey ||
      canonicalJson(existing.scope) !== canonicalJson(candidate.scope)
    ) {
      throw new RunConflictError(
        `idempotencyKey '${String(candidate.idempotencyKey)}' was already used for a different request (run '${existing.runId}')`,
        { runId: existing.runId, idempotencyKey: candidate.idempotencyKey },
      );
    }
  }

  /** Cancels a run that lost the idempotency race; it was never advanced, so nothing ran. */
  private async discardDuplicate(runId: string, duplicateOf: string): Promise<void> {
    const error: ErrorInfo = {
      code: 'CANCELLED',
      message: `duplicate trigger: the idempotency key already belongs to run ${duplicateOf}`,
      details: { duplicateOf },
      retryable: false,
    };
    const outcome = await updateWithRetry(
      this.context.store,
      runId,
      (run) => {
        if (isTerminalRunStatus(run.status)) {
          return { kind: 'noop', reason: 'already_terminal', result: undefined };
        }
        const now = this.context.clock();
        const { patch } = withAdvance(run, { cancelRequestedAt: now.toISOString() }, now);
        return { kind: 'write', patch: { ...patch, error }, result: undefined };
      },
      { random: this.context.random },
    );
    if (outcome.kind === 'written') {
      logEvent(this.context.logger, 'info', 'run_advanced', {
        runId,
        cause: 'duplicate_trigger',
        status: outcome.run.status,
        duplicateOf,
      });
    }
  }
}
