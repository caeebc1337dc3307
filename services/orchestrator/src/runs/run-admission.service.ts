import { Inject, Injectable } from '@nestjs/common';
import type { FlowRun, RunStatus } from '@tda/contracts';
import {
  admissionRun,
  decideActiveQuota,
  type RunningCounts,
  decideQueuedRun,
  planAdmission,
  type AdmissionLimits,
  type QueueEntry,
} from '@tda/flow-engine';
import { KeyedMutex, type FlowRunStore } from '@tda/flow-store';
import { describeError, logEvent, type Logger } from '@tda/observability';
import type { OrchestratorConfig } from '../config';
import { RunWriter } from '../dispatch/run-writer.service';
import { QuotaExceededError } from '../orchestrator.errors';
import { CLOCK, LOGGER, ORCHESTRATOR_CONFIG, RUN_STORE, type Clock } from '../orchestrator.tokens';
import { IdempotencyKeys } from './idempotency-keys.service';
import { endQueuedRunDecision, startQueuedRunDecision } from './queued-run.decision';
import { listRunPages } from './run-pages';

/** The config RunAdmission reads: the running limits and the active-runs quota. */
export type AdmissionConfig = Pick<
  OrchestratorConfig,
  'TDA_MAX_RUNNING_RUNS' | 'TDA_MAX_RUNNING_RUNS_PER_OWNER' | 'TDA_MAX_ACTIVE_RUNS_PER_OWNER'
>;

/** What asked for an admission pass (logged as the run_advanced cause of the runs it starts). */
export type AdmissionCause =
  'trigger' | 'idempotent_replay' | 'step_event' | 'cancel' | 'reconcile';

/**
 * Bound on the list pages one pass reads per status (100 runs a page). The list is newest
 * first, so beyond 5000 PENDING runs the oldest would be missed; far beyond any sane quota
 * (TDA_MAX_ACTIVE_RUNS_PER_OWNER × owners), and the README says so.
 */
const MAX_PAGES = 50;

export interface AdmissionPassResult {
  /** Queued (PENDING) runs looked at. */
  scanned: number;
  /** Runs this pass started (PENDING -> RUNNING, first steps READY and dispatched). */
  started: string[];
  /** Queued runs that ended without starting: cancel requested, deadline passed, duplicates. */
  ended: string[];
  /** Step-ready messages published for the started runs. */
  dispatched: number;
  /** Runs whose start/end failed (logged as admission_failed; the next pass tries again). */
  errors: number;
  /** The runs left waiting, in creation order, with their positions. */
  queue: QueueEntry[];
  /** The started/ended runs as written (a trigger answers with its run without a re-read). */
  written: FlowRun[];
}

function emptyResult(): AdmissionPassResult {
  return { scanned: 0, started: [], ended: [], dispatched: 0, errors: 0, queue: [], written: [] };
}

/**
 * Queued runs (README "Queued runs and quotas"). A triggered run is stored PENDING and only an
 * admission pass starts it: the oldest queued runs first, while fewer than TDA_MAX_RUNNING_RUNS
 * runs (and TDA_MAX_RUNNING_RUNS_PER_OWNER of the run's owner) are RUNNING. A pass runs after
 * every trigger, when a run ends (step event, cancel) and on the reconciler's timer, so the queue
 * converges even when a pass was missed (crash, failed write).
 *
 * Concurrency: passes in this process are serialised (requests while one runs coalesce into
 * one follow-up pass), and each lists the PENDING runs and counts the RUNNING ones afresh, so
 * two triggers can never both take the last slot. Across instances it is best effort: every
 * instance picks the same runs from the same snapshot (planAdmission is deterministic) and
 * starting is a conditional write, so only passes reading different snapshots can overshoot,
 * by the runs that changed in between; later passes then admit nothing until the count is
 * under the limit.
 */
@Injectable()
export class RunAdmission {
  private readonly ownerLocks = new KeyedMutex();
  private current: Promise<AdmissionPassResult> | undefined;
  private next: Promise<AdmissionPassResult> | undefined;

  constructor(
    @Inject(RUN_STORE) private readonly store: Pick<FlowRunStore, 'get' | 'list' | 'count'>,
    private readonly writer: RunWriter,
    private readonly idempotencyKeys: IdempotencyKeys,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(ORCHESTRATOR_CONFIG) private readonly config: AdmissionConfig,
  ) {}

  get limits(): AdmissionLimits {
    return {
      maxRunning: this.config.TDA_MAX_RUNNING_RUNS,
      maxRunningPerOwner: this.config.TDA_MAX_RUNNING_RUNS_PER_OWNER,
    };
  }

  /**
   * Seed 003 quota: with the owner's triggers serialised in this process, counts the owner's
   * PENDING + RUNNING runs and either throws QuotaExceededError (429, nothing created) or runs
   * `create`. Across instances two triggers may both pass the check (best effort, like the
   * running limits).
   */
  async createWithinQuota(ownerId: string, create: () => Promise<void>): Promise<void> {
    await this.ownerLocks.run(ownerId, async () => {
      const limit = this.config.TDA_MAX_ACTIVE_RUNS_PER_OWNER;
      const [pending, running] = await Promise.all([
        this.store.count({ status: 'PENDING', ownerId }),
        this.store.count({ status: 'RUNNING', ownerId }),
      ]);
      const active = pending + running;
      const decision = decideActiveQuota(ownerId, active, limit);
      if (decision.kind === 'exceeded') {
        logEvent(
          this.logger,
          'info',
          'run_quota_exceeded',
          { ownerId, active, limit },
          'trigger refused: active-runs quota reached',
        );
        throw new QuotaExceededError(ownerId, decision.active, decision.limit);
      }
      await create();
    });
  }

  /**
   * One admission pass (or joins the one about to start). Ends queued runs that must not wait
   * (decideQueuedRun), then starts the admissible runs together, re-planning after each batch
   * so a run that vanished or turned out to be a duplicate does not waste its slot.
   */
  admitQueued(cause: AdmissionCause): Promise<AdmissionPassResult> {
    if (this.next !== undefined) return this.next;
    if (this.current === undefined) {
      const pass = this.pass(cause).finally(() => {
        if (this.current === pass) this.current = undefined;
      });
      this.current = pass;
      return pass;
    }
    const follow = this.current
      .catch(() => undefined)
      .then(() => {
        this.next = undefined;
        return this.admitQueued(cause);
      });
    this.next = follow;
    return follow;
  }

  /**
   * admitQueued for callers whose own work already succeeded (a trigger, an event, a cancel):
   * a failed pass is logged and left to the next one (the reconciler's timer at the latest).
   */
  async admitQueuedSafely(cause: AdmissionCause): Promise<AdmissionPassResult> {
    try {
      return await this.admitQueued(cause);
    } catch (error) {
      logEvent(
        this.logger,
        'warn',
        'admission_failed',
        { cause, error: describeError(error) },
        'admission pass failed; the next pass retries',
      );
      return { ...emptyResult(), errors: 1 };
    }
  }

  /**
   * The admission pass after a run was created (trigger, idempotent replay, rerun). The run
   * exists from here on, so its request succeeds even if the pass or the dispatch fails (logged):
   * the reconciler's pass admits queued runs and republishes unclaimed READY steps. Answers with
   * the run as written by the pass (RUNNING), or as stored (PENDING while it is queued).
   */
  async admitCreated(run: FlowRun, cause: AdmissionCause): Promise<FlowRun> {
    const pass = await this.admitQueuedSafely(cause);
    const current =
      pass.written.find((r) => r.runId === run.runId) ??
      (await this.store.get(run.runId).catch(() => null))?.run ??
      run;
    const entry = pass.queue.find((e) => e.runId === run.runId);
    if (current.status === 'PENDING' && entry !== undefined) {
      logEvent(this.logger, 'info', 'run_queued', {
        runId: run.runId,
        ownerId: run.ownerId,
        position: entry.position,
        queueLength: entry.queueLength,
        waitingFor: entry.waitingFor.map((w) => w.kind),
      });
    }
    return current;
  }

  /** The run's place in the queue now (read-only; undefined when it is not queued). */
  async queueEntry(runId: string): Promise<QueueEntry | undefined> {
    const { running, queued } = await this.snapshot(this.clock());
    const plan = planAdmission(running, queued.map(admissionRun), this.limits);
    return plan.queue.find((entry) => entry.runId === runId);
  }

  // ---------------------------------------------------------------------------------------------

  private async pass(cause: AdmissionCause): Promise<AdmissionPassResult> {
    const now = this.clock();
    const result = emptyResult();
    const { running, queued, ending } = await this.snapshot(now);
    result.scanned = queued.length + ending.length;
    for (const run of ending)
      await this.guarded(run.runId, cause, result, () => this.end(run, cause, result));

    const byOwner = new Map(running.byOwner);
    const runningNow = { total: running.total, byOwner };
    const waiting = new Map(queued.map((run) => [run.runId, run]));
    // Each iteration starts what the plan admits, together (each start is its own run's
    // conditional write, and the plan keeps every limit), and removes them from `waiting`:
    // bounded by the queue length. A run that did not start (a duplicate, gone) leaves its slot
    // to the next iteration's plan.
    for (;;) {
      const plan = planAdmission(runningNow, [...waiting.values()].map(admissionRun), this.limits);
      const batch = plan.admit.flatMap((c) => waiting.get(c.runId) ?? []);
      if (batch.length === 0) {
        result.queue = plan.queue;
        break;
      }
      for (const run of batch) waiting.delete(run.runId);
      const statuses = await Promise.all(
        batch.map((run) =>
          this.guarded(run.runId, cause, result, () => this.start(run, cause, result)),
        ),
      );
      batch.forEach((run, i) => {
        // A run that is RUNNING now holds a slot, whoever started it (or it errored after its
        // start write: counting it is the conservative choice).
        const status = statuses[i];
        if (status !== 'RUNNING' && status !== undefined) return;
        runningNow.total += 1;
        byOwner.set(run.ownerId, (byOwner.get(run.ownerId) ?? 0) + 1);
      });
    }
    for (const entry of result.queue) {
      logEvent(this.logger, 'debug', 'run_queued', {
        runId: entry.runId,
        ownerId: entry.ownerId,
        position: entry.position,
        queueLength: entry.queueLength,
        waitingFor: entry.waitingFor.map((w) => w.kind),
        cause,
      });
    }
    return result;
  }

  /** RUNNING runs, and PENDING runs split into those that wait and those that must end now. */
  /**
   * The queued runs (listed: each is decided on its document) and how many runs are RUNNING —
   * counted, not read, and only when something waits: a pass after every trigger and run end
   * must not read every running run (issue 16: that made admission O(running runs) reads).
   * A run started between the list and the counts is counted and also listed as queued: its
   * start is then a no-op, and counting it twice only delays another run to the next pass.
   */
  private async snapshot(
    now: Date,
  ): Promise<{ running: RunningCounts; queued: FlowRun[]; ending: FlowRun[] }> {
    const queued: FlowRun[] = [];
    const ending: FlowRun[] = [];
    for (const run of await this.listAll('PENDING')) {
      const decision = decideQueuedRun(run, now);
      if (decision.kind === 'end') ending.push(run);
      else if (decision.kind === 'wait') queued.push(run);
    }
    const running =
      queued.length === 0 ? { total: 0, byOwner: new Map() } : await this.runningCounts(queued);
    return { running, queued, ending };
  }

  /** RUNNING runs overall and of each queued run's owner (the only owners the plan looks at). */
  private async runningCounts(queued: readonly FlowRun[]): Promise<RunningCounts> {
    const owners = [...new Set(queued.map((run) => run.ownerId))];
    const [total, ...perOwner] = await Promise.all([
      this.store.count({ status: 'RUNNING' }),
      ...owners.map((ownerId) => this.store.count({ status: 'RUNNING', ownerId })),
    ]);
    return {
      total: total ?? 0,
      byOwner: new Map(owners.map((ownerId, i) => [ownerId, perOwner[i] ?? 0])),
    };
  }

  /** Runs `work`; a failure is logged and counted, and the pass goes on. */
  private async guarded<T>(
    runId: string,
    cause: AdmissionCause,
    result: AdmissionPassResult,
    work: () => Promise<T>,
  ): Promise<T | undefined> {
    try {
      return await work();
    } catch (error) {
      result.errors += 1;
      logEvent(
        this.logger,
        'warn',
        'admission_failed',
        { runId, cause, error: describeError(error) },
        'admission of a run failed; the next pass retries',
      );
      return undefined;
    }
  }

  /** A queued run that ends without starting (cancel requested, deadline, unusable graph). */
  private async end(listed: FlowRun, cause: AdmissionCause, result: AdmissionPassResult) {
    // Ending writes no READY step: nothing is dispatched.
    const outcome = await this.writer.apply(listed.runId, endQueuedRunDecision, cause, 'log');
    if (outcome.kind !== 'written' || outcome.result === undefined) return;
    result.ended.push(listed.runId);
    result.written.push(outcome.run);
  }

  /**
   * Starts an admitted run: the PENDING -> RUNNING advance (first steps READY), conditional on the
   * run still being PENDING, then step-ready for its READY steps. A run whose idempotency key
   * belongs to an older run is discarded instead (its trigger would discard it too; starting it
   * would dispatch a duplicate). Returns the run's status afterwards.
   */
  private async start(
    listed: FlowRun,
    cause: AdmissionCause,
    result: AdmissionPassResult,
  ): Promise<RunStatus | undefined> {
    if (listed.idempotencyKey !== undefined) {
      const first = await this.idempotencyKeys.firstRunWithKey(
        listed.ownerId,
        listed.idempotencyKey,
      );
      if (first !== undefined && first.runId !== listed.runId) {
        await this.idempotencyKeys.discardDuplicate(listed.runId, first.runId);
        result.ended.push(listed.runId);
        return 'CANCELLED';
      }
    }
    // 'report': the start is written and counted before a publish failure fails this run's
    // admission (admission_failed; the reconciler republishes its unclaimed READY steps).
    const outcome = await this.writer.apply(listed.runId, startQueuedRunDecision, cause, 'report');
    if (outcome.kind === 'not_found') return undefined;
    const decision = outcome.result;
    if (outcome.kind !== 'written' || decision === undefined) return outcome.run.status;
    const run = outcome.run;
    result.written.push(run);
    if (decision.runStatus === 'RUNNING') result.started.push(run.runId);
    else result.ended.push(run.runId);
    if (outcome.dispatchFailure !== undefined) throw outcome.dispatchFailure;
    result.dispatched += outcome.dispatched.length;
    return run.status;
  }

  private async listAll(status: RunStatus): Promise<FlowRun[]> {
    return (await listRunPages(this.store, { status }, MAX_PAGES)).runs;
  }
}
