/**
 * seed 002 timeout policy: an invocation of 780 s, model requests of at most 600 s, and 120 s
 * kept in reserve to finalize the step (write the artifact, patch the run). The pipeline asks the
 * budget before every model call and never starts one that would eat into the reserve.
 */
export const DEFAULT_INVOCATION_TIMEOUT_MS = 780_000;
export const DEFAULT_REQUEST_DEADLINE_MS = 600_000;
export const DEFAULT_FINALIZE_BUDGET_MS = 120_000;

export interface TimeBudgetOptions {
  /** When the invocation started (epoch ms). */
  startedAt: number;
  /** Whole invocation budget. Default 780 s. */
  totalMs?: number;
  /** Upper bound of one model request. Default 600 s. */
  maxRequestMs?: number;
  /** Reserve for finalizing. Default 120 s. */
  finalizeBudgetMs?: number;
  clock?: () => Date;
}

export class TimeBudget {
  readonly startedAt: number;
  readonly totalMs: number;
  readonly maxRequestMs: number;
  readonly finalizeBudgetMs: number;
  private readonly clock: () => Date;

  constructor(options: TimeBudgetOptions) {
    this.startedAt = options.startedAt;
    this.totalMs = options.totalMs ?? DEFAULT_INVOCATION_TIMEOUT_MS;
    this.maxRequestMs = options.maxRequestMs ?? DEFAULT_REQUEST_DEADLINE_MS;
    this.finalizeBudgetMs = options.finalizeBudgetMs ?? DEFAULT_FINALIZE_BUDGET_MS;
    this.clock = options.clock ?? (() => new Date());
    for (const [name, value] of [
      ['totalMs', this.totalMs],
      ['maxRequestMs', this.maxRequestMs],
      ['finalizeBudgetMs', this.finalizeBudgetMs],
    ] as const) {
      if (!Number.isFinite(value) || value < 0) {
        throw new RangeError(`TimeBudget ${name} must be a non-negative number, got ${value}`);
      }
    }
  }

  /** A budget that ends at `deadline` (e.g. the worker harness's step deadline). */
  static until(
    deadline: Date,
    options: Omit<TimeBudgetOptions, 'startedAt' | 'totalMs'> = {},
  ): TimeBudget {
    const clock = options.clock ?? (() => new Date());
    const startedAt = clock().getTime();
    return new TimeBudget({
      ...options,
      clock,
      startedAt,
      totalMs: Math.max(0, deadline.getTime() - startedAt),
    });
  }

  elapsedMs(): number {
    return Math.max(0, this.clock().getTime() - this.startedAt);
  }

  remainingMs(): number {
    return Math.max(0, this.totalMs - this.elapsedMs());
  }

  /** The deadline for a request started now: min(maxRequestMs, remaining - finalize reserve). */
  requestDeadlineMs(): number {
    return Math.max(0, Math.min(this.maxRequestMs, this.remainingMs() - this.finalizeBudgetMs));
  }

  /** seed 002 guardrail: no external call once the remaining time is below the reserve. */
  canStartCall(): boolean {
    return this.remainingMs() >= this.finalizeBudgetMs && this.requestDeadlineMs() > 0;
  }
}
