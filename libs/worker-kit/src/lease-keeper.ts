import type { StepProgress, StepType } from '@tda/contracts';
import { decideHeartbeat, type HeartbeatDecision } from '@tda/flow-engine';
import {
  updateWithRetry,
  type FlowRunStore,
  type UpdateDecision,
  type UpdateWithRetryOptions,
  type VersionedRun,
} from '@tda/flow-store';
import { describeError, logEvent, type Logger } from '@tda/observability';
import type { StepHarnessMetrics } from './harness-metrics';

type Progress = Omit<StepProgress, 'updatedAt'>;

export type CancelCause = Extract<HeartbeatDecision, { kind: 'cancel_requested' }>['cause'];

export interface LeaseKeeperOptions {
  store: Pick<FlowRunStore, 'get' | 'update'>;
  runId: string;
  stepId: string;
  stepType: StepType;
  owner: string;
  leaseMs: number;
  heartbeatMs: number;
  clock: () => Date;
  logger: Logger;
  metrics?: StepHarnessMetrics;
  retry: UpdateWithRetryOptions;
  /** The step is no longer ours: stop and write nothing more. */
  onLeaseLost: (detail: Record<string, unknown>) => void;
  /** The run was cancelled, finished or passed its deadline: stop and finalize CANCELLED. */
  onCancelRequested: (cause: CancelCause) => void;
}

/**
 * Heartbeats for one claimed step: every `heartbeatMs` one conditional write (decideHeartbeat via
 * updateWithRetry) that extends the lease and carries the latest progress the handler reported.
 * Timers are chained (the next one is scheduled after the previous write finished), so writes
 * never overlap and are at least heartbeatMs apart — at most one write per period however often
 * the handler calls heartbeat() (seed 003 snapshot coalescing, DESIGN.md §8).
 */
export class LeaseKeeper {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private pending: Progress | undefined;
  private running: Promise<void> | undefined;
  private writes = 0;
  private written: VersionedRun | undefined;

  constructor(private readonly options: LeaseKeeperOptions) {}

  start(): void {
    this.schedule();
  }

  /** Records progress; it is written with the next heartbeat (only the latest survives). */
  report(progress: Omit<StepProgress, 'updatedAt'> | undefined): void {
    if (progress !== undefined) this.pending = { ...progress };
  }

  /** Heartbeat writes made so far. */
  get writeCount(): number {
    return this.writes;
  }

  /** The run as the last heartbeat wrote it (the finalize starts from it), if one did. */
  get lastWritten(): VersionedRun | undefined {
    return this.written;
  }

  /** Stops the timer and waits for a heartbeat in flight, so nothing lands after this. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.beat().finally(() => {
        this.running = undefined;
        this.schedule();
      });
    }, this.options.heartbeatMs);
    // A heartbeat alone must not keep the process alive.
    this.timer.unref();
  }

  private async beat(): Promise<void> {
    const o = this.options;
    const progress = this.pending;
    this.pending = undefined;
    try {
      const outcome = await updateWithRetry(
        o.store,
        o.runId,
        (run): UpdateDecision<HeartbeatDecision> => {
          const decision = decideHeartbeat(run, o.stepId, {
            now: o.clock(),
            owner: o.owner,
            leaseMs: o.leaseMs,
            ...(progress === undefined ? {} : { progress }),
          });
          return decision.kind === 'extend'
            ? { kind: 'write', patch: decision.patch, result: decision }
            : { kind: 'noop', reason: decision.kind, result: decision };
        },
        o.retry,
      );
      if (outcome.kind === 'written') this.written = { run: outcome.run, version: outcome.version };
      if (this.stopped) return;
      if (outcome.kind === 'not_found') {
        o.onLeaseLost({ reason: 'run_not_found' });
        return;
      }
      if (outcome.attempts > 1) {
        o.metrics?.storeConflicts?.inc(
          { stepType: o.stepType, phase: 'heartbeat' },
          outcome.attempts - 1,
        );
      }
      this.settle(outcome.result, progress);
    } catch (error) {
      // The lease is still valid for a while; try again next period with the same progress.
      if (this.pending === undefined) this.pending = progress;
      logEvent(o.logger, 'warn', 'step_heartbeat', { ok: false, error: describeError(error) });
    }
  }

  /** What a decided heartbeat means for the running step. */
  private settle(decision: HeartbeatDecision, progress: Progress | undefined): void {
    const o = this.options;
    switch (decision.kind) {
      case 'extend':
        this.writes += 1;
        logEvent(o.logger, 'debug', 'step_heartbeat', {
          leaseExpiresAt: decision.leaseExpiresAt,
          ...(progress === undefined ? {} : { stage: progress.stage }),
        });
        return;
      case 'lease_lost':
        o.onLeaseLost({
          reason: decision.reason,
          ...(decision.status === undefined ? {} : { status: decision.status }),
          ...(decision.leaseOwner === undefined ? {} : { leaseOwner: decision.leaseOwner }),
        });
        return;
      case 'cancel_requested':
        o.onCancelRequested(decision.cause);
        return;
      case 'invalid':
        o.onLeaseLost({ reason: 'invalid', errorCode: decision.error.code });
        return;
    }
  }
}
