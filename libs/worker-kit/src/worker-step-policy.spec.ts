import { ConfigError, loadConfig, type EnvSource } from '@tda/config';
import { describe, expect, it } from 'vitest';
import { harnessDefaultsFor, resolveHarnessPolicy, type StepHarnessPolicy } from './harness-policy';
import { LLM_REPORT_STEP, OHLCV_EXPORT_STEP, type AnyStepTypeDescriptor } from '@tda/step-types';
import { workerServiceConfigSchema } from './worker-env';
import { workerStepPolicy } from './worker-step-policy';

const SERVICE = 'worker-test';
const STEPS = { OHLCV_EXPORT: OHLCV_EXPORT_STEP, LLM_REPORT: LLM_REPORT_STEP } as const;
const described = (
  stepType: keyof typeof STEPS,
): Pick<AnyStepTypeDescriptor, 'service' | 'stepType' | 'policy'> => ({
  ...STEPS[stepType],
  service: SERVICE,
});

/** env → loadConfig → workerStepPolicy → the policy the harness resolves (what it runs with). */
function effective(
  env: EnvSource,
  stepType: keyof typeof STEPS = 'OHLCV_EXPORT',
  servicePolicy: Partial<StepHarnessPolicy> = {},
): StepHarnessPolicy {
  const config = loadConfig(SERVICE, workerServiceConfigSchema, env);
  const descriptor = described(stepType);
  return resolveHarnessPolicy(
    workerStepPolicy(config, descriptor, servicePolicy),
    descriptor.policy,
  );
}

function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('workerStepPolicy (TDA_STEP_* env)', () => {
  it('unset: the step type policy', () => {
    expect(effective({})).toEqual(harnessDefaultsFor(OHLCV_EXPORT_STEP.policy));
    expect(effective({}, 'LLM_REPORT').timeoutMs).toBe(780_000);
    expect(effective({}).timeoutMs).toBe(120_000);
  });

  it('applies every variable to the harness policy', () => {
    const policy = effective({
      TDA_STEP_TIMEOUT_SECONDS: '90',
      TDA_STEP_LEASE_SECONDS: '2.5',
      TDA_STEP_HEARTBEAT_SECONDS: '0.5',
      TDA_STEP_MAX_ATTEMPTS: '5',
      TDA_STEP_RETRY_TRIES: '4',
      TDA_STEP_RETRY_BASE_DELAY_MS: '50',
    });
    expect(policy).toMatchObject({
      timeoutMs: 90_000,
      leaseMs: 2_500,
      heartbeatMs: 500,
      maxAttempts: 5,
      handlerMaxTries: 4,
      handlerRetryBaseDelayMs: 50,
      // the seed's 1 s / 2 s / 4 s shape kept: cap = 4 × base
      handlerRetryMaxDelayMs: 200,
    });
    // fields the env does not name keep their defaults
    expect(policy.claimMaxAttempts).toBe(
      harnessDefaultsFor(OHLCV_EXPORT_STEP.policy).claimMaxAttempts,
    );
  });

  it('overrides one field over the step type policy, and the service policy wins over the env', () => {
    expect(effective({ TDA_STEP_TIMEOUT_SECONDS: '300' }, 'LLM_REPORT')).toMatchObject({
      timeoutMs: 300_000,
      leaseMs: 60_000,
    });
    expect(
      effective({ TDA_STEP_TIMEOUT_SECONDS: '300' }, 'LLM_REPORT', { timeoutMs: 400_000 })
        .timeoutMs,
    ).toBe(400_000);
  });

  it('refuses a heartbeat not shorter than the lease, naming both variables', () => {
    const error = configError(() => effective({ TDA_STEP_HEARTBEAT_SECONDS: '60' }));
    expect(error.service).toBe(SERVICE);
    expect(error.problems.join('\n')).toMatch(
      /TDA_STEP_HEARTBEAT_SECONDS \/ TDA_STEP_LEASE_SECONDS: the heartbeat \(60 s\) must be shorter than the lease \(60 s\) of OHLCV_EXPORT/,
    );
    // a shorter lease alone breaks the default 15 s heartbeat too
    expect(() => effective({ TDA_STEP_LEASE_SECONDS: '10' })).toThrow(ConfigError);
    expect(() =>
      effective({ TDA_STEP_LEASE_SECONDS: '10', TDA_STEP_HEARTBEAT_SECONDS: '3' }),
    ).not.toThrow();
  });

  it('refuses a backoff that does not fit in the step timeout', () => {
    // 5 tries, 10 s base: 10 + 20 + 40 + 40 = 110 s of waiting ≥ a 100 s timeout
    const error = configError(() =>
      effective({
        TDA_STEP_TIMEOUT_SECONDS: '100',
        TDA_STEP_RETRY_TRIES: '5',
        TDA_STEP_RETRY_BASE_DELAY_MS: '10000',
      }),
    );
    expect(error.problems.join('\n')).toMatch(
      /TDA_STEP_RETRY_TRIES \/ TDA_STEP_RETRY_BASE_DELAY_MS: the backoff between tries alone \(110 s\)/,
    );
  });

  it('refuses malformed values at parse time with the variable name', () => {
    for (const [key, value] of [
      ['TDA_STEP_TIMEOUT_SECONDS', '0'],
      ['TDA_STEP_LEASE_SECONDS', 'soon'],
      ['TDA_STEP_HEARTBEAT_SECONDS', '-1'],
      ['TDA_STEP_MAX_ATTEMPTS', '1.5'],
      ['TDA_STEP_MAX_ATTEMPTS', '101'],
      ['TDA_STEP_RETRY_TRIES', '0'],
      ['TDA_STEP_RETRY_BASE_DELAY_MS', '-5'],
    ] as const) {
      const error = configError(() => effective({ [key]: value }));
      expect(error.problems.join('\n')).toContain(key);
    }
  });
});
