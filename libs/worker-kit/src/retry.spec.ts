import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { exponentialDelayMs, retryWithBackoff } from './retry';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** An attempt that fails `failures` times with `error`, then returns its try number. */
function flaky(failures: number, error: unknown = new Error('503')) {
  const calls: number[] = [];
  const attempt = (tries: number): Promise<number> => {
    calls.push(tries);
    return tries <= failures ? Promise.reject(error) : Promise.resolve(tries);
  };
  return { attempt, calls };
}

describe('retryWithBackoff (the harness retry loop)', () => {
  it('backs off 1 s, 2 s, 4 s (capped) between tries and succeeds', async () => {
    expect([1, 2, 3, 4].map((n) => exponentialDelayMs(n, 1_000, 4_000))).toEqual([
      1_000, 2_000, 4_000, 4_000,
    ]);
    const { attempt, calls } = flaky(2);
    const delays: number[] = [];
    const pending = retryWithBackoff(attempt, {
      tries: 3,
      baseDelayMs: 1_000,
      maxDelayMs: 4_000,
      retryable: () => true,
      onRetry: (_e, _t, delay) => delays.push(delay),
    });
    await vi.advanceTimersByTimeAsync(999);
    expect(calls).toEqual([1]);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toEqual([1, 2]);
    await vi.advanceTimersByTimeAsync(2_000);
    await expect(pending).resolves.toEqual({ ok: true, value: 3, tries: 3 });
    expect(delays).toEqual([1_000, 2_000]);
  });

  it('stops at the first failure that is not retryable, or when the tries run out', async () => {
    const fatal = flaky(5, new Error('bad input'));
    await expect(
      retryWithBackoff(fatal.attempt, { tries: 3, baseDelayMs: 1, retryable: () => false }),
    ).resolves.toMatchObject({ ok: false, tries: 1, aborted: false });
    const always = flaky(5);
    const pending = retryWithBackoff(always.attempt, {
      tries: 3,
      baseDelayMs: 10,
      retryable: () => true,
    });
    await vi.advanceTimersByTimeAsync(100);
    await expect(pending).resolves.toMatchObject({ ok: false, tries: 3 });
    expect(always.calls).toEqual([1, 2, 3]);
  });

  it('does not start a backoff that canWait refuses (a deadline before the next try)', async () => {
    const { attempt, calls } = flaky(5);
    const result = await retryWithBackoff(attempt, {
      tries: 3,
      baseDelayMs: 1_000,
      retryable: () => true,
      canWait: (delay) => delay < 1_000,
    });
    expect(result).toMatchObject({ ok: false, tries: 1 });
    expect(calls).toEqual([1]);
  });

  it('an abort during the backoff ends it at once with the last error', async () => {
    const { attempt } = flaky(5);
    const controller = new AbortController();
    const pending = retryWithBackoff(attempt, {
      tries: 3,
      baseDelayMs: 60_000,
      retryable: () => true,
      signal: controller.signal,
    });
    await vi.advanceTimersByTimeAsync(10);
    controller.abort();
    await expect(pending).resolves.toMatchObject({ ok: false, tries: 1, aborted: true });
  });
});
