import { ConfigError } from '@tda/config';
import { MAX_STEP_ATTEMPTS_LIMIT } from '@tda/flow-engine';
import { z } from 'zod';
import {
  harnessDefaultsFor,
  HarnessConfigError,
  resolveHarnessPolicy,
  type StepHarnessPolicy,
} from './harness-policy';
import { exponentialDelayMs } from './retry';
import type { AnyStepTypeDescriptor } from '@tda/step-types';

/** Seconds may be fractional (a test lease of 0.5 s); one day is far beyond any step. */
const seconds = z.coerce.number().positive().max(86_400).optional();

/**
 * Operator overrides of the step policy, shared by every worker service (part of
 * workerServiceEnv). Unset = the policy of the worker's step type descriptor. A worker applies them to its harness only; the claim records timeout and
 * maxAttempts in the run document, so the reconciler follows them without being configured.
 */
export const workerStepPolicyEnv = {
  /** Step timeout from the claim → FAILED STEP_TIMEOUT (policy timeoutMs). */
  TDA_STEP_TIMEOUT_SECONDS: seconds,
  /** Lease written by the claim and by every heartbeat (policy leaseMs). */
  TDA_STEP_LEASE_SECONDS: seconds,
  /** Heartbeat period; must stay shorter than the lease (policy heartbeatMs). */
  TDA_STEP_HEARTBEAT_SECONDS: seconds,
  /** Claims allowed per step (policy maxAttempts). */
  TDA_STEP_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(MAX_STEP_ATTEMPTS_LIMIT).optional(),
  /** In-process tries of a retryable handler error (policy handlerMaxTries; 1 = no retry). */
  TDA_STEP_RETRY_TRIES: z.coerce.number().int().min(1).max(100).optional(),
  /** Backoff before the 2nd try; the cap scales with it (policy handlerRetryBaseDelayMs). */
  TDA_STEP_RETRY_BASE_DELAY_MS: z.coerce.number().int().min(0).max(600_000).optional(),
} as const;

export type WorkerStepPolicyConfig = {
  [K in keyof typeof workerStepPolicyEnv]?: number | undefined;
};

const toMs = (value: number): number => Math.round(value * 1_000);
const inSeconds = (ms: number): string => `${ms / 1_000} s`;

/** The harness fields the env sets (unset variables are left out). */
function envOverrides(
  config: WorkerStepPolicyConfig,
  defaults: StepHarnessPolicy,
): Partial<StepHarnessPolicy> {
  const overrides: Partial<StepHarnessPolicy> = {};
  if (config.TDA_STEP_TIMEOUT_SECONDS !== undefined) {
    overrides.timeoutMs = toMs(config.TDA_STEP_TIMEOUT_SECONDS);
  }
  if (config.TDA_STEP_LEASE_SECONDS !== undefined) {
    overrides.leaseMs = toMs(config.TDA_STEP_LEASE_SECONDS);
  }
  if (config.TDA_STEP_HEARTBEAT_SECONDS !== undefined) {
    overrides.heartbeatMs = toMs(config.TDA_STEP_HEARTBEAT_SECONDS);
  }
  if (config.TDA_STEP_MAX_ATTEMPTS !== undefined) {
    overrides.maxAttempts = config.TDA_STEP_MAX_ATTEMPTS;
  }
  if (config.TDA_STEP_RETRY_TRIES !== undefined) {
    overrides.handlerMaxTries = config.TDA_STEP_RETRY_TRIES;
  }
  const base = config.TDA_STEP_RETRY_BASE_DELAY_MS;
  if (base !== undefined) {
    // Keep the policy's backoff shape (seed 004: 1 s / 2 s / 4 s → cap = 4 × base).
    const ratio =
      defaults.handlerRetryBaseDelayMs > 0
        ? defaults.handlerRetryMaxDelayMs / defaults.handlerRetryBaseDelayMs
        : 1;
    overrides.handlerRetryBaseDelayMs = base;
    overrides.handlerRetryMaxDelayMs = base * ratio;
  }
  return overrides;
}

/**
 * The harness policy overrides of a worker service: its TDA_STEP_* env over the step type's
 * policy, then `servicePolicy` (what the service itself decides, e.g. the LLM worker's timeout)
 * over both. The combination is checked here, at boot, so a policy that cannot work is a
 * ConfigError naming the variables (a heartbeat not shorter than the lease, a backoff that does
 * not fit in the step timeout, ...) instead of a harness error or a lease that lapses in
 * production.
 */
export function workerStepPolicy(
  config: WorkerStepPolicyConfig,
  descriptor: Pick<AnyStepTypeDescriptor, 'service' | 'stepType' | 'policy'>,
  servicePolicy: Partial<StepHarnessPolicy> = {},
): Partial<StepHarnessPolicy> {
  const { service, stepType } = descriptor;
  const defaults = harnessDefaultsFor(descriptor.policy);
  const overrides = { ...envOverrides(config, defaults), ...servicePolicy };
  const effective = { ...defaults };
  for (const [key, value] of Object.entries(overrides)) {
    if (value !== undefined) Object.assign(effective, { [key]: value });
  }
  const problems: string[] = [];
  if (effective.heartbeatMs >= effective.leaseMs) {
    problems.push(
      `TDA_STEP_HEARTBEAT_SECONDS / TDA_STEP_LEASE_SECONDS: the heartbeat (${inSeconds(effective.heartbeatMs)}) must be shorter than the lease (${inSeconds(effective.leaseMs)}) of ${stepType}, or the lease lapses between heartbeats`,
    );
  }
  let backoffMs = 0;
  for (let retry = 1; retry < effective.handlerMaxTries; retry += 1) {
    backoffMs += exponentialDelayMs(
      retry,
      effective.handlerRetryBaseDelayMs,
      effective.handlerRetryMaxDelayMs,
    );
  }
  if (backoffMs >= effective.timeoutMs) {
    problems.push(
      `TDA_STEP_RETRY_TRIES / TDA_STEP_RETRY_BASE_DELAY_MS: the backoff between tries alone (${inSeconds(backoffMs)}) does not fit in the step timeout (${inSeconds(effective.timeoutMs)}) of ${stepType}`,
    );
  }
  if (problems.length > 0) throw new ConfigError(service, problems);
  try {
    resolveHarnessPolicy(overrides, descriptor.policy);
  } catch (error) {
    if (error instanceof HarnessConfigError) throw new ConfigError(service, [error.message]);
    throw error;
  }
  return overrides;
}
