import { TdaError } from '@tda/contracts';
import { MAX_STEP_ATTEMPTS_LIMIT, type StepPolicy } from '@tda/flow-engine';

/**
 * Timing and retry policy of the step harness. Every number is configurable so that tests run in
 * milliseconds; the defaults are the production values (DESIGN.md §6, §8; seed 004 §5.1). The
 * step-level fields (lease, heartbeat, timeout, maxAttempts, handler retries) default to the
 * policy of the handler's step type descriptor.
 */
export interface StepHarnessPolicy {
  /** Lease written by the claim and extended by every heartbeat. Default 60 s. */
  leaseMs: number;
  /**
   * Time between heartbeat writes (lease extension + coalesced progress). Default 15 s: one
   * document per run sustains ~1 write/s, so heartbeats stay >= 15 s apart (DESIGN.md §8).
   * Must be shorter than leaseMs.
   */
  heartbeatMs: number;
  /**
   * Step timeout: the handler is aborted at claim time + timeoutMs (recorded by the claim as
   * `steps.<id>.deadlineAt` for the reconciler). Default 120 s (seed 004), 780 s for LLM steps.
   */
  timeoutMs: number;
  /**
   * Claims allowed per step (recorded by the claim as `steps.<id>.maxAttempts`; the reconciler
   * reclaims an expired lease only below it). The harness itself never executes a step that is
   * already at it again when taking over its own orphan: FAILED RETRIES_EXHAUSTED. Default 3.
   */
  maxAttempts: number;
  /**
   * Read-decide-write rounds of the claim (and of the other conditional writes) before the
   * harness gives up and nacks (seed 002 "claim conflict: retry a few times with short jitter").
   * Default 5.
   */
  claimMaxAttempts: number;
  /**
   * Deliveries of one message after which a still READY step is finalized FAILED
   * RETRIES_EXHAUSTED instead of being tried again: the Pub/Sub emulator never dead-letters, so
   * the bound lives in code (DESIGN.md §4). Default 10 (the topology's dead-letter threshold).
   */
  maxDeliveryAttempts: number;
  /** In-process tries of a handler that throws a retryable StepError (seed 004: 3). */
  handlerMaxTries: number;
  /** Backoff before the 2nd try; doubles per try up to handlerRetryMaxDelayMs (1 s, 2 s, 4 s). */
  handlerRetryBaseDelayMs: number;
  handlerRetryMaxDelayMs: number;
  /** Tries of one artifact put that fails with a retryable error. Default 3. */
  artifactWriteMaxTries: number;
  artifactWriteBaseDelayMs: number;
  /**
   * Tries of the finalize write / step-event publish when the store or broker throws something
   * other than a version conflict (e.g. UNAVAILABLE). Default 3.
   */
  infraMaxTries: number;
  infraBaseDelayMs: number;
  /** Artifact names: gs://<artifactBucket>/<artifactPrefix>/<runId>/<timeframe>/<stepId>... */
  artifactBucket: string;
  artifactPrefix: string;
  /** Suffix of the primary artifact, i.e. what `artifactUri()` returns. Default '.json'. */
  primaryArtifactSuffix: string;
  /** Topology prefix of the step-events topic (default 'tda' → tda-step-events). */
  topicPrefix: string;
}

export const DEFAULT_HARNESS_POLICY: Readonly<StepHarnessPolicy> = Object.freeze({
  leaseMs: 60_000,
  heartbeatMs: 15_000,
  timeoutMs: 120_000,
  maxAttempts: 3,
  claimMaxAttempts: 5,
  maxDeliveryAttempts: 10,
  handlerMaxTries: 3,
  handlerRetryBaseDelayMs: 1_000,
  handlerRetryMaxDelayMs: 4_000,
  artifactWriteMaxTries: 3,
  artifactWriteBaseDelayMs: 200,
  infraMaxTries: 3,
  infraBaseDelayMs: 200,
  artifactBucket: 'tda-artifacts',
  artifactPrefix: 'runs',
  primaryArtifactSuffix: '.json',
  topicPrefix: 'tda',
});

/** Thrown at construction for a policy that cannot work (a clear boot failure, not a hang). */
export class HarnessConfigError extends TdaError {
  constructor(message: string) {
    super('INVALID_REQUEST', message);
  }
}

const POSITIVE: readonly (keyof StepHarnessPolicy)[] = [
  'leaseMs',
  'heartbeatMs',
  'timeoutMs',
  'maxAttempts',
  'claimMaxAttempts',
  'maxDeliveryAttempts',
  'handlerMaxTries',
  'artifactWriteMaxTries',
  'infraMaxTries',
];
const NON_NEGATIVE: readonly (keyof StepHarnessPolicy)[] = [
  'handlerRetryBaseDelayMs',
  'handlerRetryMaxDelayMs',
  'artifactWriteBaseDelayMs',
  'infraBaseDelayMs',
];
/** A GCS bucket name and an object-name prefix without leading/trailing '/'. */
const BUCKET = /^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$/;
const PREFIX = /^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/;

/**
 * The harness defaults for a step type: DEFAULT_HARNESS_POLICY with the step-level fields from
 * the step type's StepPolicy (its descriptor). Without one: seed 004's defaults.
 */
export function harnessDefaultsFor(step?: Readonly<StepPolicy>): StepHarnessPolicy {
  if (step === undefined) return { ...DEFAULT_HARNESS_POLICY };
  return {
    ...DEFAULT_HARNESS_POLICY,
    leaseMs: step.leaseMs,
    heartbeatMs: step.heartbeatMs,
    timeoutMs: step.timeoutMs,
    maxAttempts: step.maxAttempts,
    handlerMaxTries: step.retry.tries,
    handlerRetryBaseDelayMs: step.retry.baseDelayMs,
    handlerRetryMaxDelayMs: step.retry.maxDelayMs,
  };
}

export function resolveHarnessPolicy(
  overrides: Partial<StepHarnessPolicy> = {},
  step?: Readonly<StepPolicy>,
): StepHarnessPolicy {
  const policy: StepHarnessPolicy = harnessDefaultsFor(step);
  for (const [key, value] of Object.entries(overrides) as [keyof StepHarnessPolicy, unknown][]) {
    if (value !== undefined) Object.assign(policy, { [key]: value });
  }
  for (const key of POSITIVE) {
    const value = policy[key];
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
      throw new HarnessConfigError(`harness policy ${key} must be a positive number`);
    }
  }
  for (const key of NON_NEGATIVE) {
    const value = policy[key];
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw new HarnessConfigError(`harness policy ${key} must be a non-negative number`);
    }
  }
  if (!Number.isInteger(policy.maxAttempts) || policy.maxAttempts > MAX_STEP_ATTEMPTS_LIMIT) {
    throw new HarnessConfigError(
      `harness policy maxAttempts must be an integer in 1..${MAX_STEP_ATTEMPTS_LIMIT}`,
    );
  }
  if (policy.heartbeatMs >= policy.leaseMs) {
    throw new HarnessConfigError(
      `harness policy heartbeatMs (${policy.heartbeatMs}) must be shorter than leaseMs (${policy.leaseMs}), or the lease lapses between heartbeats`,
    );
  }
  if (!BUCKET.test(policy.artifactBucket)) {
    throw new HarnessConfigError(
      `harness policy artifactBucket '${policy.artifactBucket}' is not a bucket name`,
    );
  }
  if (!PREFIX.test(policy.artifactPrefix)) {
    throw new HarnessConfigError(
      `harness policy artifactPrefix '${policy.artifactPrefix}' must be path segments of [A-Za-z0-9_-] without leading or trailing '/'`,
    );
  }
  if (!/^\.[A-Za-z0-9][A-Za-z0-9._-]*$/.test(policy.primaryArtifactSuffix)) {
    throw new HarnessConfigError(
      `harness policy primaryArtifactSuffix '${policy.primaryArtifactSuffix}' must look like '.json'`,
    );
  }
  return policy;
}
