import { setTimeout as sleep } from 'node:timers/promises';

export interface EventuallyOptions {
  timeoutMs?: number;
  intervalMs?: number;
}

/**
 * Polls `check` until it neither throws nor returns `false`, then returns its result: any other
 * result, `undefined`, `null`, `0` and `''` included, ends the wait (an assertion returns
 * undefined), and only the value `false` keeps polling like a throw.
 * Integration tests use this instead of fixed sleeps: the emulators are asynchronous and a
 * fixed delay is either flaky or slow. On timeout the last failure is rethrown, so the test
 * reports what was still wrong.
 */
export async function expectEventually<T>(
  check: () => T | Promise<T>,
  { timeoutMs = 15_000, intervalMs = 50 }: EventuallyOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown = new Error('condition was never checked');
  for (;;) {
    try {
      const result = await check();
      if (result !== false) return result;
      lastError = new Error('condition returned false');
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) throw lastError;
    await sleep(intervalMs);
  }
}
