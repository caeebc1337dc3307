import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { ArtifactStore } from '@tda/artifacts';
import type { FlowRun, RunStatus } from '@tda/contracts';
import { artifactMissingDrift, expectedArtifacts, type ReconcileOptions } from '@tda/flow-engine';
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
import { RunAdmission } from '../runs/run-admission.service';
import { SignalEmitter } from '../schedules/signal-emitter.service';
import {
  decideReconcile,
  reconcileDecision,
  reconcileOptions,
  type ReconcileConfig,
  type ReconcileScope,
} from './reconcile.decision';
import {
  addAdmission,
  countWrite,
  emptyReport,
  finishedLine,
  tallyDrift,
  type ReconcileMode,
  type ReconcilePassOptions,
  type ReconcileReport,
  type RunDrift,
} from './reconcile-report';

export type { ReconcileMode, ReconcilePassOptions, ReconcileReport, RunDrift };

// PENDING runs are queued: only RunAdmission starts (or ends) them, at the end of each pass.
const ACTIVE_STATUSES: readonly RunStatus[] = ['RUNNING'];
// SUCCEEDED runs cannot hold a RUNNING step (every step finished for the run to succeed).
const ENDED_STATUSES: readonly RunStatus[] = ['FAILED', 'CANCELLED'];
/** Conflicts in a pass are not worth long retries: the next pass decides again. */
const RECONCILE_WRITE_ATTEMPTS = 3;

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
    private readonly signals: SignalEmitter,
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
    const report = emptyReport(mode, started, maxRuns);
    await this.scanActive(report, options.checkArtifacts === true);
    await this.scanEnded(report, mode);
    if (mode === 'apply') await this.sweepSignals();
    tallyDrift(report);
    // Starting queued runs writes: never in a dry run.
    if (mode === 'apply' && !this.stopped) {
      addAdmission(report, await this.admission.admitQueuedSafely('reconcile'));
    }
    report.durationMs = Math.max(0, this.clock().getTime() - started.getTime());
    const line = finishedLine(report);
    logEvent(this.logger, line.level, 'reconcile_finished', line.fields);
    return report;
  }

  /** RUNNING runs, newest first, up to report.maxRuns (then `truncated`). */
  private async scanActive(report: ReconcileReport, checkArtifacts: boolean): Promise<void> {
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
          if (visited.size >= report.maxRuns) {
            report.truncated = true;
            break scan;
          }
          visited.add(run.runId);
          report.runsScanned += 1;
          const drift = await this.reconcileOne(run, report, report.mode, 'active');
          if (checkArtifacts && drift.error === undefined) {
            await this.checkArtifacts(drift.checked, drift.entry, report);
          }
          if (drift.entry.items.length > 0 || drift.entry.error !== undefined) {
            report.drift.runs.push(drift.entry);
          }
        }
        cursor = page.nextCursor ?? undefined;
      } while (cursor !== undefined);
    }
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

  /**
   * Flow 7: a scheduled run that SUCCEEDED and has no signal decision (its last step event ran
   * out of deliveries) gets it now, like its step event would have given it (SignalEmitter is
   * idempotent). The newest TDA_RECONCILE_ENDED_RUNS succeeded runs are looked at.
   */
  private async sweepSignals(): Promise<void> {
    const window = this.config.TDA_RECONCILE_ENDED_RUNS;
    let seen = 0;
    let cursor: string | undefined;
    while (seen < window && !this.stopped) {
      const page = await this.store.list({
        status: 'SUCCEEDED',
        limit: Math.min(LIST_LIMIT_MAX, window - seen),
        ...(cursor === undefined ? {} : { cursor }),
      });
      for (const run of page.runs) {
        seen += 1;
        if (run.trigger.scheduleId === undefined || run.signal !== undefined) continue;
        await this.signals.afterRun(run).catch((error: unknown) =>
          logEvent(this.logger, 'warn', 'reconcile_failed', {
            runId: run.runId,
            error: describeError(error),
          }),
        );
      }
      cursor = page.nextCursor ?? undefined;
      if (cursor === undefined) break;
    }
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
    if (outcome.kind === 'written') countWrite(report, decision);
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
}
