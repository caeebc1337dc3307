import type { ErrorCode, RunStatus } from '@tda/contracts';
import type { DriftItem, DriftKind, ReconcileResult } from '@tda/flow-engine';
import type { LogLevel } from '@tda/observability';
import type { AdmissionPassResult } from '../runs/run-admission.service';

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

/** Drift lines named in the reconcile_finished log line (the full list is in the report). */
const LOGGED_DRIFT_MAX = 20;

export function emptyReport(
  mode: ReconcileMode,
  startedAt: Date,
  maxRuns: number,
): ReconcileReport {
  return {
    mode,
    startedAt: startedAt.toISOString(),
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
}

/** Counts what one run's written reconcile decision did. */
export function countWrite(report: ReconcileReport, decision: ReconcileResult): void {
  report.runsWritten += 1;
  report.reclaimedSteps += decision.reclaimed.length;
  report.failedSteps += decision.failed.length;
  report.timedOutSteps += decision.timedOut.length;
  report.cancelledSteps += decision.cancelled.length;
  if (decision.advance.termination !== undefined) report.runsFinished += 1;
}

/** drift.total and drift.byKind from the runs' items. */
export function tallyDrift(report: ReconcileReport): void {
  for (const entry of report.drift.runs) {
    for (const item of entry.items) {
      report.drift.total += 1;
      report.drift.byKind[item.kind] = (report.drift.byKind[item.kind] ?? 0) + 1;
    }
  }
}

/** Queued runs the admission pass looked at, started or ended count as this pass's work. */
export function addAdmission(report: ReconcileReport, admission: AdmissionPassResult): void {
  report.runsScanned += admission.scanned;
  report.runsWritten += admission.started.length + admission.ended.length;
  report.runsFinished += admission.ended.length;
  report.republished += admission.dispatched;
  report.errors += admission.errors;
}

/** The reconcile_finished line: the counts and up to LOGGED_DRIFT_MAX drift lines. */
export function finishedLine(report: ReconcileReport): {
  level: LogLevel;
  fields: Record<string, unknown>;
} {
  const { drift, ...counts } = report;
  const eventful =
    report.mode === 'dry_run' ||
    report.runsWritten + report.republished + report.errors + drift.total > 0;
  const lines = drift.runs
    .flatMap((run) =>
      run.items.map((item) => `${run.runId} ${item.stepId ?? '-'} ${item.kind} ${item.action}`),
    )
    .slice(0, LOGGED_DRIFT_MAX);
  return {
    // A quiet pass every 30 s is noise at info level.
    level: eventful ? 'info' : 'debug',
    fields: {
      ...counts,
      driftTotal: drift.total,
      driftByKind: drift.byKind,
      ...(lines.length === 0 ? {} : { drift: lines }),
    },
  };
}
