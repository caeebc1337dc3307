import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { FlowRun, RunStatus } from '@tda/contracts';
import { isEmptyPatch, reconcileRun, type ReconcileResult } from '@tda/flow-engine';
import { LIST_LIMIT_MAX, updateWithRetry } from '@tda/flow-store';
import { describeError, logEvent } from '@tda/observability';
import { RunAdvancer } from '../dispatch/run-advancer.service';
import { StepDispatcher, type DispatchRequest } from '../dispatch/step-dispatcher.service';
import { ORCHESTRATOR_CONTEXT, type OrchestratorContext } from '../orchestrator.options';
import { RunAdmission, type AdmissionPassResult } from '../runs/run-admission.service';

export interface ReconcileReport {
  startedAt: string;
  durationMs: number;
  /** Non-terminal runs looked at. */
  runsScanned: number;
  /** Runs that got a (single) conditional write. */
  runsWritten: number;
  /** Step-ready messages published (stale READY, reclaimed and newly READY steps). */
  republished: number;
  reclaimedSteps: number;
  failedSteps: number;
  cancelledSteps: number;
  /** Runs this pass ended (deadline, failures, everything done, ...). */
  runsFinished: number;
  /** Runs whose reconcile threw (logged; retried on the next pass). */
  errors: number;
}

// PENDING runs are queued: only RunAdmission starts (or ends) them, at the end of each pass.
const ACTIVE_STATUSES: readonly RunStatus[] = ['RUNNING'];
/** Conflicts in a pass are not worth long retries: the next pass decides again. */
const RECONCILE_WRITE_ATTEMPTS = 3;

/**
 * The reconciler (DESIGN §5.4): a timer locally (Cloud Scheduler calling the same pass in GCP
 * is the production intent). For every PENDING/RUNNING run, one pure reconcileRun decision:
 * expired leases (reclaim / LEASE_EXPIRED / cancelled), the run deadline (RUN_TIMEOUT), the
 * failure policy and new READY steps; at most one conditional write per run per pass; then
 * step-ready for every READY step that has waited longer than TDA_READY_REPUBLISH_AFTER_MS or
 * became READY in this pass. Passes never overlap.
 */
@Injectable()
export class Reconciler implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<ReconcileReport> | undefined;
  private stopped = false;

  constructor(
    @Inject(ORCHESTRATOR_CONTEXT) private readonly context: OrchestratorContext,
    private readonly dispatcher: StepDispatcher,
    private readonly advancer: RunAdvancer,
    private readonly admission: RunAdmission,
  ) {}

  onApplicationBootstrap(): void {
    this.stopped = false;
    this.schedule();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  /** One pass now (or joins the pass in progress). Also what tests and an admin hook call. */
  reconcileOnce(): Promise<ReconcileReport> {
    this.running ??= this.pass().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private schedule(): void {
    const interval = this.context.config.TDA_RECONCILE_INTERVAL_MS;
    if (interval <= 0 || this.stopped) return;
    this.timer = setTimeout(() => {
      this.reconcileOnce()
        .catch((error: unknown) =>
          logEvent(
            this.context.logger,
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

  private async pass(): Promise<ReconcileReport> {
    const started = this.context.clock();
    const report: ReconcileReport = {
      startedAt: started.toISOString(),
      durationMs: 0,
      runsScanned: 0,
      runsWritten: 0,
      republished: 0,
      reclaimedSteps: 0,
      failedSteps: 0,
      cancelledSteps: 0,
      runsFinished: 0,
      errors: 0,
    };
    const visited = new Set<string>();
    for (const status of ACTIVE_STATUSES) {
      let cursor: string | undefined;
      do {
        if (this.stopped) break;
        const page = await this.context.store.list({
          status,
          limit: LIST_LIMIT_MAX,
          ...(cursor === undefined ? {} : { cursor }),
        });
        for (const run of page.runs) {
          // A run advanced PENDING -> RUNNING earlier in this pass shows up again: once is enough.
          if (visited.has(run.runId) || this.stopped) continue;
          visited.add(run.runId);
          report.runsScanned += 1;
          try {
            await this.reconcileOne(run, report);
          } catch (error) {
            report.errors += 1;
            logEvent(
              this.context.logger,
              'warn',
              'reconcile_failed',
              { runId: run.runId, error: describeError(error) },
              'reconcile of a run failed; retried on the next pass',
            );
          }
        }
        cursor = page.nextCursor ?? undefined;
      } while (cursor !== undefined);
    }
    if (!this.stopped)
      this.addAdmission(report, await this.admission.admitQueuedSafely('reconcile'));
    report.durationMs = Math.max(0, this.context.clock().getTime() - started.getTime());
    const eventful = report.runsWritten + report.republished + report.errors > 0;
    // A quiet pass every 30 s is noise at info level.
    logEvent(this.context.logger, eventful ? 'info' : 'debug', 'reconcile_finished', { ...report });
    return report;
  }

  /** Queued runs the admission pass looked at, started or ended count as this pass's work. */
  private addAdmission(report: ReconcileReport, admission: AdmissionPassResult): void {
    report.runsScanned += admission.scanned;
    report.runsWritten += admission.started.length + admission.ended.length;
    report.runsFinished += admission.ended.length;
    report.republished += admission.dispatched;
    report.errors += admission.errors;
  }

  private async reconcileOne(listed: FlowRun, report: ReconcileReport): Promise<void> {
    const options = {
      maxAttempts: this.context.config.TDA_MAX_STEP_ATTEMPTS,
      republishReadyAfterMs: this.context.config.TDA_READY_REPUBLISH_AFTER_MS,
    };
    const outcome = await updateWithRetry<{ decision: ReconcileResult; read: FlowRun }>(
      this.context.store,
      listed.runId,
      (run) => {
        const decision = reconcileRun(run, { ...options, now: this.context.clock() });
        return isEmptyPatch(decision.patch)
          ? { kind: 'noop', reason: 'nothing_to_write', result: { decision, read: run } }
          : { kind: 'write', patch: decision.patch, result: { decision, read: run } };
      },
      { random: this.context.random, maxAttempts: RECONCILE_WRITE_ATTEMPTS },
    );
    if (outcome.kind === 'not_found') return;
    const { decision } = outcome.result;
    const run = outcome.kind === 'written' ? outcome.run : outcome.result.read;
    if (outcome.kind === 'written') {
      report.runsWritten += 1;
      report.reclaimedSteps += decision.reclaimed.length;
      report.failedSteps += decision.failed.length;
      report.cancelledSteps += decision.cancelled.length;
      if (decision.advance.termination !== undefined) report.runsFinished += 1;
      this.advancer.logAdvanced(run, decision.advance, 'reconcile');
    }
    if (decision.republish.length === 0) return;
    const fresh = new Set(decision.advance.newlyReady);
    const requests: DispatchRequest[] = decision.republish.map((stepId) => ({
      stepId,
      reason: fresh.has(stepId) ? 'advance' : 'reconcile',
    }));
    const dispatched = await this.dispatcher.dispatch(run, requests);
    report.republished += dispatched.length;
  }
}
