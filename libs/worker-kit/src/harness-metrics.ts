/**
 * The counters the harness reports, as the minimal shapes of prom-client's Counter and Histogram
 * (`inc(labels, value?)`, `observe(labels, value)`), so @tda/observability's createMetrics()
 * (whose instruments carry the same names and labels) or a test double plugs in. Every member is
 * optional.
 */
export interface CounterLike {
  inc(labels: Record<string, string>, value?: number): void;
}

export interface HistogramLike {
  observe(labels: Record<string, string>, value: number): void;
}

export interface StepHarnessMetrics {
  /** labels: stepType, result (claimed | noop | conflict = claim rounds exhausted → nack). */
  stepClaims?: CounterLike;
  /** labels: stepType, status, errorCode ('none' on success). One per finalize write. */
  stepOutcomes?: CounterLike;
  /** labels: stepType, outcome (executed|recovered|failed|noop|invalid), status ('' if none). */
  stepDeliveries?: CounterLike;
  /** labels: stepType, status. Seconds from claim to finalize. */
  stepDurationSeconds?: HistogramLike;
  /** labels: stepType, phase (claim|heartbeat|finalize). Lost optimistic-concurrency rounds. */
  storeConflicts?: CounterLike;
  /** labels: stepType, code. In-process handler retries. */
  handlerRetries?: CounterLike;
  /** labels: stepType. */
  leaseLost?: CounterLike;
}
