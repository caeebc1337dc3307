import type { StepType } from '@tda/contracts';
import { InvalidRequestError } from './errors';

/** In-process retries of a retryable handler error (seed 004 §5.1: 3 tries, 1 s / 2 s / 4 s). */
export interface StepRetryPolicy {
  /** Tries in total (1 = no retry). */
  tries: number;
  /** Delay before the 2nd try; doubles per try up to maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
}

/**
 * How one step type is executed and supervised (each step type's descriptor in @tda/step-types
 * holds one; DEFAULT_STEP_POLICY is seed 004's). The worker harness takes its defaults from it;
 * the claim records `timeoutMs` (as `steps.<id>.deadlineAt`) and `maxAttempts` in the run
 * document, so the reconciler decides step timeouts and reclaims without knowing any worker's
 * configuration.
 */
export interface StepPolicy {
  /** Step timeout of one attempt, from its claim: the handler is aborted → FAILED STEP_TIMEOUT. */
  timeoutMs: number;
  /** Claims allowed per step: an expired lease is reclaimed while attempt < maxAttempts. */
  maxAttempts: number;
  /** Lease written by the claim and by every heartbeat. */
  leaseMs: number;
  /** Heartbeat period; < leaseMs, and >= 15 s in production (one document per run, DESIGN §8). */
  heartbeatMs: number;
  retry: StepRetryPolicy;
}

export type StepPolicyOverrides = Partial<Omit<StepPolicy, 'retry'>> & {
  retry?: Partial<StepRetryPolicy>;
};

/** Seed 004 §5.1: 3 tries with 1 s / 2 s / 4 s backoff, a 120 s step timeout, 3 attempts. */
export const DEFAULT_STEP_POLICY: Readonly<StepPolicy> = Object.freeze({
  timeoutMs: 120_000,
  maxAttempts: 3,
  leaseMs: 60_000,
  heartbeatMs: 15_000,
  retry: Object.freeze({ tries: 3, baseDelayMs: 1_000, maxDelayMs: 4_000 }),
});

/** Upper bound of maxAttempts (the flow_run contract's steps.<id>.maxAttempts maximum). */
export const MAX_STEP_ATTEMPTS_LIMIT = 100;

/** A usable maxAttempts: an integer in 1..MAX_STEP_ATTEMPTS_LIMIT. */
export function isValidMaxAttempts(value: unknown): value is number {
  return (
    typeof value === 'number' &&
    Number.isInteger(value) &&
    value >= 1 &&
    value <= MAX_STEP_ATTEMPTS_LIMIT
  );
}

/** Throws InvalidRequestError (details `{maxAttempts}`) unless undefined or isValidMaxAttempts. */
export function assertMaxAttemptsOption(maxAttempts: number | undefined): void {
  if (maxAttempts !== undefined && !isValidMaxAttempts(maxAttempts)) {
    throw new InvalidRequestError(
      `maxAttempts must be an integer in 1..${MAX_STEP_ATTEMPTS_LIMIT}`,
      { maxAttempts },
    );
  }
}

/**
 * `base` (a step type's policy, from its descriptor in @tda/step-types) with `overrides` applied
 * field by field (undefined fields are ignored). Throws InvalidRequestError naming the field for a
 * policy that cannot work (non-positive timeout, heartbeat not shorter than the lease, ...).
 */
export function applyStepPolicyOverrides(
  base: Readonly<StepPolicy>,
  overrides: StepPolicyOverrides = {},
  stepType?: StepType,
): StepPolicy {
  const { retry, ...top } = overrides;
  const policy: StepPolicy = { ...base, retry: { ...base.retry } };
  for (const [key, value] of Object.entries(top)) {
    if (value !== undefined) Object.assign(policy, { [key]: value });
  }
  for (const [key, value] of Object.entries(retry ?? {})) {
    if (value !== undefined) Object.assign(policy.retry, { [key]: value });
  }
  assertStepPolicy(policy, stepType);
  return policy;
}

/** Throws InvalidRequestError for a policy that cannot work; details name the field. */
export function assertStepPolicy(policy: StepPolicy, stepType?: StepType): void {
  const fail = (field: string, message: string, value: unknown): never => {
    throw new InvalidRequestError(`step policy ${field} ${message}`, {
      field,
      value,
      ...(stepType === undefined ? {} : { stepType }),
    });
  };
  const positive = (field: string, value: number): void => {
    if (!Number.isFinite(value) || value <= 0) fail(field, 'must be a positive number', value);
  };
  const nonNegative = (field: string, value: number): void => {
    if (!Number.isFinite(value) || value < 0) fail(field, 'must be a non-negative number', value);
  };
  const integer = (field: string, value: number, max: number): void => {
    if (!Number.isInteger(value) || value < 1 || value > max) {
      fail(field, `must be an integer in 1..${max}`, value);
    }
  };
  positive('timeoutMs', policy.timeoutMs);
  positive('leaseMs', policy.leaseMs);
  positive('heartbeatMs', policy.heartbeatMs);
  integer('maxAttempts', policy.maxAttempts, MAX_STEP_ATTEMPTS_LIMIT);
  integer('retry.tries', policy.retry.tries, 100);
  nonNegative('retry.baseDelayMs', policy.retry.baseDelayMs);
  nonNegative('retry.maxDelayMs', policy.retry.maxDelayMs);
  if (policy.heartbeatMs >= policy.leaseMs) {
    fail(
      'heartbeatMs',
      `(${policy.heartbeatMs}) must be shorter than leaseMs (${policy.leaseMs}), or the lease lapses between heartbeats`,
      policy.heartbeatMs,
    );
  }
}
