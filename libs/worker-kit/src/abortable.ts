import type { StepAbortReason } from './step-handler';

/** Resolves true after `ms`, or false as soon as `signal` aborts (never rejects). */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted === true) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export type Settled<T> =
  | { kind: 'ok'; value: T }
  | { kind: 'error'; error: unknown }
  | { kind: 'aborted'; reason: StepAbortReason };

/**
 * Runs `fn` and settles with its value or error, or with the abort reason as soon as `signal`
 * aborts — without waiting for a handler that ignores its signal (the harness must be able to
 * finalize a timed-out step). A late result or rejection of an abandoned call is swallowed.
 */
export function settleOrAbort<T>(fn: () => Promise<T>, signal: AbortSignal): Promise<Settled<T>> {
  if (signal.aborted) return Promise.resolve({ kind: 'aborted', reason: abortReasonOf(signal) });
  return new Promise((resolve) => {
    let done = false;
    const onAbort = (): void => {
      if (done) return;
      done = true;
      resolve({ kind: 'aborted', reason: abortReasonOf(signal) });
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const finish = (settled: Settled<T>): void => {
      signal.removeEventListener('abort', onAbort);
      if (done) return;
      done = true;
      resolve(settled);
    };
    let promise: Promise<T>;
    try {
      promise = Promise.resolve(fn());
    } catch (error) {
      finish({ kind: 'error', error });
      return;
    }
    promise.then(
      (value) => finish({ kind: 'ok', value }),
      (error: unknown) => finish({ kind: 'error', error }),
    );
  });
}

const REASON_KINDS: ReadonlySet<string> = new Set([
  'cancelled',
  'lease_lost',
  'deadline',
  'shutdown',
]);

/** The StepAbortReason the harness aborted with (anything else reads as shutdown). */
export function abortReasonOf(signal: AbortSignal): StepAbortReason {
  const reason: unknown = signal.reason;
  if (typeof reason === 'object' && reason !== null) {
    const kind = (reason as { kind?: unknown }).kind;
    if (typeof kind === 'string' && REASON_KINDS.has(kind)) return reason as StepAbortReason;
  }
  return { kind: 'shutdown' };
}
