import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { ArtifactStore } from '@tda/artifacts';
import type { ErrorCode, FlowRun, RunStatus } from '@tda/contracts';
import {
  artifactMissingDrift,
  expectedArtifacts,
  type DriftItem,
  type DriftKind,
  type ReconcileOptions,
} from '@tda/flow-engine';
import { LIST_LIMIT_MAX, type FlowRunStore } from '@tda/flow-store';
import { describeError, logEvent, type Logger } from '@tda/observability';
import type { OrchestratorConfig } from '../config';
import { RunWriter } from '../dispatch/run-writer.service';
import { mapError } from '../http/api-exception.filter';
import {
  ARTIFACT_STORE,
  CLOCK,
  LOGGER,
  ORCHESTRATOR_CONFIG,
  RUN_STORE,
  type Clock,
} from '../orchestrator.tokens';
import { RunAdmission, type AdmissionPassResult } from '../runs/run-admission.service';
import {
  decideReconcile,
  reconcileDecision,
  reconcileOptions,
  type ReconcileConfig,
  type ReconcileScope,
} from './reconcile.decision';

/** dry_run: decide and report, zero writes and zero publishes. apply: decide, write, publish. */
export type ReconcileMode = 'dry_run' | 'apply';

export interface ReconcilePassOptions {
  /** Default 'apply' (the timer's pass). */
  mode?: ReconcileMode;
  /** Runs to look at in this pass (default and maximum TDA_RECONCILE_MAX_RUNS). */
  maxRuns?: number;
  /**
   * Check that every SUCCEEDED step's artifact exists (one ArtifactStore.exists per step; report
   * only, never fixed). Default false: the timer's pass skips this I/O.
   */
  checkArtifacts?: boolean;
}

/** What the pass found (and, in apply mode, did) for one run with drift. */
export interface RunDrift {
  runId: string;
  flowKey: string;
  /** The run's status as read. */
  status: RunStatus;
  items: DriftItem[];
  /** apply only: the result of this pass's single conditional write and its step-ready messages. */
  applied?: { written: boolean; status: RunStatus; republished: string[] };
  /** The run could not be reconciled (retried on the next pass); sanitized. */
  error?: { code: ErrorCode; message: string };
}

export interface ReconcileReport {
  mode: ReconcileMode;
  startedAt: string;
  durationMs: number;
  /** RUNNING runs looked at (+ queued runs the admission pass looked at, apply only). */
  runsScanned: number;
  /**
   * Ended runs (FAILED, CANCELLED) looked at for steps left RUNNING by a dead worker: the newest
   * TDA_RECONCILE_ENDED_RUNS of each status (a window, never `truncated`).
   */
  endedRunsScanned: number;
  maxRuns: number;
  /** More runs were left than maxRuns allowed: run the pass again (or raise the limit). */
  truncated: boolean;
  /** Runs that got a (single) conditional write. Always 0 in a dry run. */
  runsWritten: number;
  /** Step-ready messages published (stale READY, reclaimed and newly READY steps). 0 in a dry run. */
  republished: number;
  reclaimedSteps: number;
  /** FAILED by LEASE_EXPIRED on the last attempt or by STEP_TIMEOUT. */
  failedSteps: number;
  /** FAILED by STEP_TIMEOUT (a subset of failedSteps). */
  timedOutSteps: number;
  cancelledSteps: number;
  /** Runs this pass ended (deadline, failures, everything done, ...). */
  runsFinished: number;
  /** Runs whose reconcile threw (logged; retried on the next pass). */
  errors: number;
  artifactsChecked: number;
  artifactsMissing: number;
  /** ArtifactStore.exists calls that failed (the artifact's state is unknown; logged). */
  artifactCheckErrors: number;
  drift: {
    total: number;
    byKind: Partial<Record<DriftKind, number>>;
    /** Only runs with drift (or an error), in the order they were scanned (newest first). */
    runs: RunDrift[];
  };
}

// PENDING runs are queued: only RunAdmission starts (or ends) them, at the end of each pass.
const ACTIVE_STATUSES: readonly RunStatus[] = ['RUNNING'];
// SUCCEEDED runs cannot hold a RUNNING step (every step finished for the run to succeed).
const ENDED_STATUSES: readonly RunStatus[] = ['FAILED', 'CANCELLED'];
/** Conflicts in a pass are not worth long retries: the next pass decides again. */
const RECONCILE_WRITE_ATTEMPTS = 3;
/** Drift lines named in the reconcile_finished log line (the full list is in the report). */
const LOGGED_DRIFT_MAX = 20;

/** The config the reconciler reads: its timer, scan bounds and the decision's thresholds. */
export type ReconcilerConfig = ReconcileConfig &
  Pick<
    OrchestratorConfig,
    'TDA_RECONCILE_INTERVAL_MS' | 'TDA_RECONCILE_MAX_RUNS' | 'TDA_RECONCILE_ENDED_RUNS'
  >;

/**
 * The reconciler (DESIGN §5.4): a timer locally (Cloud Scheduler calling POST /admin/reconcile
 * in GCP is the production intent). For every RUNNING run, one pure reconcileRun decision: steps
 * past their deadline (STEP_TIMEOUT), expired leases (reclaim / LEASE_EXPIRED / cancelled), the
 * run deadline (RUN_TIMEOUT), the failure policy and new READY steps; at most one conditional
 * write per run per pass; then step-ready for every READY step that has waited longer than
 * TDA_READY_REPUBLISH_AFTER_MS or became READY in this pass. The same pass as a dry run reports
 * the drift without writing or publishing anything. Apply passes never overlap. The newest
 * TDA_RECONCILE_ENDED_RUNS FAILED and CANCELLED runs are looked at too: a step left RUNNING there
 * by a dead worker is closed CANCELLED once its lease expired (reconcileEndedRun).
 */
@Injectable()
export class Reconciler implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<ReconcileReport> | undefined;
  /** Apply passes run one after the other (timer, POST /admin/reconcile, tests). */
  private applying: Promise<unknown> = Promise.resolve();
  private stopped = false;

  constructor(
    @Inject(RUN_STORE) private readonly store: Pick<FlowRunStore, 'list'>,
    private readonly writer: RunWriter,
    private readonly admission: RunAdmission,
    @Inject(ARTIFACT_STORE) private readonly artifacts: Pick<ArtifactStore, 'exists'>,
    @Inject(ORCHESTRATOR_CONFIG) private readonly config: ReconcilerConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  onApplicationBootstrap(): void {
    this.stopped = false;
    this.schedule();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.applying.catch(() => undefined);
  }

  /** One apply pass now (or joins the timer's pass in progress). What the timer and tests call. */
  reconcileOnce(): Promise<ReconcileReport> {
    this.running ??= this.run({ mode: 'apply' }).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /**
   * One pass with explicit options (GET / POST /admin/reconcile). A dry run starts at once (it
   * writes nothing); an apply pass waits for the one in progress, then runs on its own.
   */
  run(options: ReconcilePassOptions = {}): Promise<ReconcileReport> {
    if (options.mode === 'dry_run') return this.pass(options);
    const next = this.applying.catch(() => undefined).then(() => this.pass(options));
    this.applying = next;
    return next;
  }

  private schedule(): void {
    const interval = this.config.TDA_RECONCILE_INTERVAL_MS;
    if (interval <= 0 || this.stopped) return;
    this.timer = setTimeout(() => {
      this.reconcileOnce()
        .catch((error: unknown) =>
          logEvent(
            this.logger,
            'error',
            'reconcile_failed',
            { error: describeError(error) },
            'reconcile pass failed',
          ),
        )
        .finally(() => this.schedule());
    }, interval);
    // The timer alone must not keep a process alive that is otherwise done.
    this.timer.unref();
  }

  private async pass(options: ReconcilePassOptions): Promise<ReconcileReport> {
    const mode = options.mode ?? 'apply';
    const maxRuns = Math.min(
      options.maxRuns ?? this.config.TDA_RECONCILE_MAX_RUNS,
      this.config.TDA_RECONCILE_MAX_RUNS,
    );
    const started = this.clock();
    const report: ReconcileReport = {
      mode,
      startedAt: started.toISOString(),
      durationMs: 0,
      runsScanned: 0,
      endedRunsScanned: 0,
      maxRuns,
      truncated: false,
      runsWritten: 0,
      republished: 0,
      reclaimedSteps: 0,
      failedSteps: 0,
      timedOutSteps: 0,
      cancelledSteps: 0,
      runsFinished: 0,
      errors: 0,
      artifactsChecked: 0,
      artifactsMissing: 0,
      artifactCheckErrors: 0,
      drift: { total: 0, byKind: {}, runs: [] },
    };
    const visited = new Set<string>();
    scan: for (const status of ACTIVE_STATUSES) {
      let cursor: string | undefined;
      do {
        if (this.stopped) break scan;
        const page = await this.store.list({
          status,
          limit: LIST_LIMIT_MAX,
          ...(cursor === undefined ? {} : { cursor }),
        });
        for (const run of page.runs) {
          if (visited.has(run.runId) || this.stopped) continue;
          if (visited.size >= maxRuns) {
            report.truncated = true;
            break scan;
          }
          visited.add(run.runId);
          report.runsScanned += 1;
          const drift = await this.reconcileOne(run, report, mode, 'active');
          if (options.checkArtifacts === true && drift.error === undefined) {
            await this.checkArtifacts(drift.checked, drift.entry, report);
          }
          if (drift.entry.items.length > 0 || drift.entry.error !== undefined) {
            report.drift.runs.push(drift.entry);
          }
        }
        cursor = page.nextCursor ?? undefined;
      } while (cursor !== undefined);
    }
    await this.scanEnded(report, mode);
    for (const entry of report.drift.runs) {
      for (const item of entry.items) {
        report.drift.total += 1;
        report.drift.byKind[item.kind] = (report.drift.byKind[item.kind] ?? 0) + 1;
      }
    }
    // Starting queued runs writes: never in a dry run.
    if (mode === 'apply' && !this.stopped) {
      this.addAdmission(report, await this.admission.admitQueuedSafely('reconcile'));
    }
    report.durationMs = Math.max(0, this.clock().getTime() - started.getTime());
    this.logFinished(report);
    return report;
  }

  /**
   * Issue 5 "no lost steps": a run that ended (cancel, fail-fast) while a worker held a step, and
   * whose worker died before a heartbeat could finalize the step, would keep that step RUNNING
   * forever. The newest ended runs of each status get reconcileEndedRun (only expired leases are
   * closed CANCELLED; nothing else about an ended run changes). Their drift joins the report.
   */
  private async scanEnded(report: ReconcileReport, mode: ReconcileMode): Promise<void> {
    const window = this.config.TDA_RECONCILE_ENDED_RUNS;
    for (const status of ENDED_STATUSES) {
      let seen = 0;
      let cursor: string | undefined;
      while (seen < window && !this.stopped) {
        const page = await this.store.list({
          status,
          limit: Math.min(LIST_LIMIT_MAX, window - seen),
          ...(cursor === undefined ? {} : { cursor }),
        });
        for (const run of page.runs) {
          if (seen >= window || this.stopped) break;
          seen += 1;
          report.endedRunsScanned += 1;
          const { entry } = await this.reconcileOne(run, report, mode, 'ended');
          if (entry.items.length > 0 || entry.error !== undefined) report.drift.runs.push(entry);
        }
        cursor = page.nextCursor ?? undefined;
        if (cursor === undefined) break;
      }
    }
  }

  /** Queued runs the admission pass looked at, started or ended count as this pass's work. */
  private addAdmission(report: ReconcileReport, admission: AdmissionPassResult): void {
    report.runsScanned += admission.scanned;
    report.runsWritten += admission.started.length + admission.ended.length;
    report.runsFinished += admission.ended.length;
    report.republished += admission.dispatched;
    report.errors += admission.errors;
  }

  private options(now: Date): ReconcileOptions {
    return reconcileOptions(this.config, now);
  }

  /**
   * The run's drift and, in apply mode, its fix: read → reconcileRun → one conditional write
   * (re-read and re-decided on a conflict) → step-ready messages. Returns the run the artifact
   * check should look at (after the write). Never throws: a failure is the entry's error.
   */
  private async reconcileOne(
    listed: FlowRun,
    report: ReconcileReport,
    mode: ReconcileMode,
    scope: ReconcileScope,
  ): Promise<{ entry: RunDrift; checked: FlowRun; error?: unknown }> {
    const entry: RunDrift = {
      runId: listed.runId,
      flowKey: listed.flowKey,
      status: listed.status,
      items: [],
    };
    try {
      if (mode === 'dry_run') {
        entry.items = decideReconcile(listed, this.options(this.clock()), scope).drift;
        return { entry, checked: listed };
      }
      return { entry, checked: await this.applyOne(listed, entry, report, scope) };
    } catch (error) {
      report.errors += 1;
      const mapped = mapError(error);
      entry.error = { code: mapped.code, message: mapped.message };
      logEvent(
        this.logger,
        'warn',
        'reconcile_failed',
        { runId: listed.runId, error: describeError(error) },
        'reconcile of a run failed; retried on the next pass',
      );
      return { entry, checked: listed, error };
    }
  }

  private async applyOne(
    listed: FlowRun,
    entry: RunDrift,
    report: ReconcileReport,
    scope: ReconcileScope,
  ): Promise<FlowRun> {
    // 'report': the write is counted first, then a publish failure is this run's error.
    const outcome = await this.writer.apply(
      listed.runId,
      (run, now) => reconcileDecision(run, this.options(now), scope),
      'reconcile',
      'report',
      { maxAttempts: RECONCILE_WRITE_ATTEMPTS },
    );
    if (outcome.kind === 'not_found') return listed;
    const { run } = outcome;
    const { decision, readStatus } = outcome.result;
    entry.status = readStatus;
    entry.items = decision.drift;
    entry.applied = { written: outcome.kind === 'written', status: run.status, republished: [] };
    if (outcome.kind === 'written') {
      report.runsWritten += 1;
      report.reclaimedSteps += decision.reclaimed.length;
      report.failedSteps += decision.failed.length;
      report.timedOutSteps += decision.timedOut.length;
      report.cancelledSteps += decision.cancelled.length;
      if (decision.advance.termination !== undefined) report.runsFinished += 1;
    }
    if (outcome.dispatchFailure !== undefined) throw outcome.dispatchFailure;
    entry.applied.republished = outcome.dispatched.map((d) => d.stepId);
    report.republished += outcome.dispatched.length;
    return run;
  }

  /**
   * SUCCEEDED steps whose artifact is missing (DESIGN §5.4 "SUCCEEDED without readable artifact
   * → report"). Report only: re-running a step that others already consumed is an operator's
   * decision (retry / rerun), never automatic.
   */
  private async checkArtifacts(
    run: FlowRun,
    entry: RunDrift,
    report: ReconcileReport,
  ): Promise<void> {
    const expected = expectedArtifacts(run);
    const checks = await Promise.all(
      expected.map(async (expectation) => {
        if (expectation.uri === undefined) return artifactMissingDrift(expectation, 'no_uri');
        report.artifactsChecked += 1;
        try {
          const exists = await this.artifacts.exists(expectation.uri);
          return exists ? undefined : artifactMissingDrift(expectation, 'not_found');
        } catch (error) {
          report.artifactCheckErrors += 1;
          logEvent(
            this.logger,
            'warn',
            'reconcile_failed',
            { runId: run.runId, stepId: expectation.stepId, error: describeError(error) },
            'artifact existence check failed',
          );
          return undefined;
        }
      }),
    );
    for (const item of checks) {
      if (item === undefined) continue;
      report.artifactsMissing += 1;
      entry.items.push(item);
    }
  }

  private logFinished(report: ReconcileReport): void {
    const { drift, ...counts } = report;
    const eventful =
      report.mode === 'dry_run' ||
      report.runsWritten + report.republished + report.errors + drift.total > 0;
    const lines = drift.runs
      .flatMap((run) =>
        run.items.map((item) => `${run.runId} ${item.stepId ?? '-'} ${item.kind} ${item.action}`),
      )
      .slice(0, LOGGED_DRIFT_MAX);
    // A quiet pass every 30 s is noise at info level.
    logEvent(this.logger, eventful ? 'info' : 'debug', 'reconcile_finished', {
      ...counts,
      driftTotal: drift.total,
      driftByKind: drift.byKind,
      ...(lines.length === 0 ? {} : { drift: lines }),
    });
  }
}
