import { abortableSleep } from './abortable';

export interface RetryOptions {
  /** Tries in total (1 = no retry). */
  tries: number;
  /** Delay before the 2nd try; doubles per try up to maxDelayMs (seed 004: 1 s, 2 s, 4 s). */
  baseDelayMs: number;
  maxDelayMs?: number;
  /** Whether this failure may be tried again (the budget permitting). */
  retryable: (error: unknown) => boolean;
  /** A retry starts only while this returns true for its delay (e.g. before a deadline). */
  canWait?: (delayMs: number) => boolean;
  /** Called before each backoff (logs, metrics). */
  onRetry?: (error: unknown, tries: number, delayMs: number) => void;
  /** Stops the backoff early: the last error is returned. */
  signal?: AbortSignal;
}

export type RetryResult<T> =
  | { ok: true; value: T; tries: number }
  | { ok: false; error: unknown; tries: number; aborted: boolean };

/** Exponential backoff: base, 2·base, 4·base ... capped (no jitter: one step, one worker). */
export function exponentialDelayMs(retry: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, retry - 1));
}

/**
 * The one retry loop of the harness (handler tries, artifact puts, the finalize write, the step
 * event): runs `attempt` until it succeeds, fails with something not retryable, runs out of
 * tries or of time (`canWait`), or the signal aborts during a backoff. Never throws: the caller
 * decides what a final failure means (FAILED step, nack, a logged publish failure).
 */
export async function retryWithBackoff<T>(
  attempt: (tries: number) => Promise<T>,
  options: RetryOptions,
): Promise<RetryResult<T>> {
  const maxDelayMs = options.maxDelayMs ?? Number.POSITIVE_INFINITY;
  for (let tries = 1; ; tries += 1) {
    try {
      return { ok: true, value: await attempt(tries), tries };
    } catch (error) {
      const delayMs = exponentialDelayMs(tries, options.baseDelayMs, maxDelayMs);
      const again =
        tries < options.tries && options.retryable(error) && (options.canWait?.(delayMs) ?? true);
      if (!again) return { ok: false, error, tries, aborted: false };
      options.onRetry?.(error, tries, delayMs);
      if (!(await abortableSleep(delayMs, options.signal))) {
        return { ok: false, error, tries, aborted: true };
      }
    }
  }
}
