import type { VersionedRun } from '@tda/flow-store';
import { LeaseKeeper, type CancelCause, type LeaseKeeperOptions } from '../lease-keeper';
import type { StepAbortReason, StepHeartbeat } from '../step-handler';

export type BudgetLease = Omit<LeaseKeeperOptions, 'onLeaseLost' | 'onCancelRequested' | 'clock'>;

export interface StepBudgetOptions {
  /** The step timeout: the signal aborts with `deadline` then. */
  deadline: Date;
  /** The run's deadline (ms); earlier than `deadline` → the signal aborts with `cancelled`. */
  runDeadlineMs?: number;
  clock: () => Date;
  /** Heartbeats (lease extension, progress, cancel and lease-loss detection) while it runs. */
  lease?: BudgetLease;
  /** Every live budget, so that a shutdown can abort them all. */
  live: Set<StepBudget>;
}

/**
 * The time and lease budget of one piece of step work (recovery or execution): one
 * AbortController fired by the step deadline, the run deadline, a cancel or a lost lease seen by
 * a heartbeat, or a shutdown; and, with a lease, the LeaseKeeper's heartbeats. `stop()` clears
 * every timer and waits for a heartbeat in flight, so nothing is written after it.
 */
export class StepBudget {
  readonly deadline: Date;
  /** Why a `cancelled` abort happened (cancel requested, run finished, run deadline). */
  cancelCause: CancelCause | undefined;
  /** What the heartbeat saw when the lease was lost. */
  leaseLostDetail: Record<string, unknown> | undefined;
  private readonly controller = new AbortController();
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly keeper: LeaseKeeper | undefined;

  constructor(private readonly options: StepBudgetOptions) {
    this.deadline = options.deadline;
    const now = options.clock().getTime();
    this.after(options.deadline.getTime() - now, () => this.abort({ kind: 'deadline' }));
    const { runDeadlineMs } = options;
    // The run deadline stops the step at once; a heartbeat would only see it at the next beat.
    if (runDeadlineMs !== undefined && runDeadlineMs < options.deadline.getTime()) {
      this.after(runDeadlineMs - now, () => this.cancel('deadline_passed'));
    }
    this.keeper =
      options.lease === undefined
        ? undefined
        : new LeaseKeeper({
            ...options.lease,
            clock: options.clock,
            onLeaseLost: (detail) => this.loseLease(detail),
            onCancelRequested: (cause) => this.cancel(cause),
          });
    options.live.add(this);
    this.keeper?.start();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The run as this budget's last heartbeat wrote it, if one did (after the claim's write). */
  get lastRunWrite(): VersionedRun | undefined {
    return this.keeper?.lastWritten;
  }

  /** What handlers call: progress for the next heartbeat (no-op without a lease). */
  readonly heartbeat: StepHeartbeat = (progress) => this.keeper?.report(progress);

  /** The lease is gone (a heartbeat or a refused checkpoint saw it): abort with lease_lost. */
  loseLease(detail: Record<string, unknown>): void {
    this.leaseLostDetail ??= detail;
    this.abort({ kind: 'lease_lost' });
  }

  abort(reason: StepAbortReason): void {
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  }

  /** Timers off, heartbeats stopped (and awaited): nothing of this budget writes after it. */
  async stop(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    await this.keeper?.stop();
    this.options.live.delete(this);
  }

  private cancel(cause: CancelCause): void {
    this.cancelCause ??= cause;
    this.abort({ kind: 'cancelled' });
  }

  private after(ms: number, fire: () => void): void {
    this.timers.push(setTimeout(fire, Math.max(0, ms)));
  }
}
