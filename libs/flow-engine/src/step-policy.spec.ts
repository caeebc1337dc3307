import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from './errors';
import {
  applyStepPolicyOverrides,
  assertMaxAttemptsOption,
  DEFAULT_STEP_POLICY,
  isValidMaxAttempts,
  MAX_STEP_ATTEMPTS_LIMIT,
} from './step-policy';

describe('step policies', () => {
  it('seed 004 defaults: 120 s step timeout, 3 attempts, 3 tries of 1 s / 2 s / 4 s', () => {
    expect(DEFAULT_STEP_POLICY).toEqual({
      timeoutMs: 120_000,
      maxAttempts: 3,
      leaseMs: 60_000,
      heartbeatMs: 15_000,
      retry: { tries: 3, baseDelayMs: 1_000, maxDelayMs: 4_000 },
    });
  });

  it('applies overrides field by field (undefined ignored) and never mutates the base', () => {
    const base = { ...DEFAULT_STEP_POLICY, timeoutMs: 780_000 };
    const policy = applyStepPolicyOverrides(base, {
      timeoutMs: 5_000,
      maxAttempts: undefined,
      retry: { tries: 1 },
    });
    expect(policy).toEqual({
      ...DEFAULT_STEP_POLICY,
      timeoutMs: 5_000,
      retry: { ...DEFAULT_STEP_POLICY.retry, tries: 1 },
    });
    policy.retry.baseDelayMs = 7;
    expect(base.retry.baseDelayMs).toBe(1_000);
    expect(base.timeoutMs).toBe(780_000);
    expect(DEFAULT_STEP_POLICY.retry.baseDelayMs).toBe(1_000);
  });

  it.each([
    [{ timeoutMs: 0 }, 'timeoutMs'],
    [{ maxAttempts: 0 }, 'maxAttempts'],
    [{ maxAttempts: 1.5 }, 'maxAttempts'],
    [{ maxAttempts: 101 }, 'maxAttempts'],
    [{ heartbeatMs: 60_000 }, 'heartbeatMs'],
    [{ leaseMs: Number.NaN }, 'leaseMs'],
    [{ retry: { tries: 0 } }, 'retry.tries'],
    [{ retry: { baseDelayMs: -1 } }, 'retry.baseDelayMs'],
  ])('refuses %o naming %s', (overrides, field) => {
    let thrown: unknown;
    try {
      applyStepPolicyOverrides(DEFAULT_STEP_POLICY, overrides, 'OHLCV_EXPORT');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidRequestError);
    expect((thrown as InvalidRequestError).details).toMatchObject({
      field,
      stepType: 'OHLCV_EXPORT',
    });
  });

  it('maxAttempts: an integer in 1..MAX_STEP_ATTEMPTS_LIMIT (claim, reconcile, recorded value)', () => {
    expect([1, 3, MAX_STEP_ATTEMPTS_LIMIT].map(isValidMaxAttempts)).toEqual([true, true, true]);
    expect([0, 2.5, MAX_STEP_ATTEMPTS_LIMIT + 1, '3', undefined].map(isValidMaxAttempts)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
    expect(() => assertMaxAttemptsOption(undefined)).not.toThrow();
    expect(() => assertMaxAttemptsOption(0)).toThrow(InvalidRequestError);
    expect(() => assertMaxAttemptsOption(0)).toThrow(/maxAttempts must be an integer in 1\.\.100/);
  });
});
