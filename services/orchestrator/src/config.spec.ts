import { ConfigError } from '@tda/config';
import { describe, expect, it } from 'vitest';
import { loadOrchestratorConfig } from './config';

const TOKEN = 'a-token-of-16-chars+';

describe('orchestrator config', () => {
  it('fills the documented defaults', () => {
    expect(loadOrchestratorConfig({ TDA_API_TOKEN: TOKEN })).toMatchObject({
      PORT: 8080,
      TDA_API_TOKEN: TOKEN,
      TDA_RECONCILE_INTERVAL_MS: 30_000,
      TDA_READY_REPUBLISH_AFTER_MS: 60_000,
      TDA_DEFAULT_OWNER: 'local-user',
      TDA_STEP_TIMEOUT_GRACE_MS: 15_000,
      TDA_RECONCILE_MAX_RUNS: 1_000,
      TDA_RECONCILE_ENDED_RUNS: 200,
      TDA_DEFAULT_RUN_DEADLINE_SECONDS: 3_600,
      TDA_MAX_RUNNING_RUNS: 20,
      TDA_MAX_RUNNING_RUNS_PER_OWNER: 5,
      TDA_MAX_ACTIVE_RUNS_PER_OWNER: 20,
      TDA_PUBSUB_PREFIX: 'tda',
      TDA_BACKEND: 'memory',
    });
  });

  it('has no step-attempt override unless TDA_MAX_STEP_ATTEMPTS is set', () => {
    expect(loadOrchestratorConfig({ TDA_API_TOKEN: TOKEN }).TDA_MAX_STEP_ATTEMPTS).toBeUndefined();
    expect(
      loadOrchestratorConfig({ TDA_API_TOKEN: TOKEN, TDA_MAX_STEP_ATTEMPTS: '2' })
        .TDA_MAX_STEP_ATTEMPTS,
    ).toBe(2);
    expect(() =>
      loadOrchestratorConfig({ TDA_API_TOKEN: TOKEN, TDA_MAX_STEP_ATTEMPTS: '0' }),
    ).toThrow(ConfigError);
  });

  it('coerces numbers from env strings; 0 disables the reconciler timer and the default deadline', () => {
    const config = loadOrchestratorConfig({
      TDA_API_TOKEN: TOKEN,
      PORT: '9000',
      TDA_RECONCILE_INTERVAL_MS: '0',
      TDA_DEFAULT_RUN_DEADLINE_SECONDS: '0',
    });
    expect(config).toMatchObject({
      PORT: 9000,
      TDA_RECONCILE_INTERVAL_MS: 0,
      TDA_DEFAULT_RUN_DEADLINE_SECONDS: 0,
    });
  });

  it.each([
    ['a missing token', {}, 'TDA_API_TOKEN'],
    ['a short token', { TDA_API_TOKEN: 'short' }, 'TDA_API_TOKEN'],
    [
      'a negative interval',
      { TDA_API_TOKEN: TOKEN, TDA_RECONCILE_INTERVAL_MS: '-1' },
      'TDA_RECONCILE_INTERVAL_MS',
    ],
    ['a bad owner', { TDA_API_TOKEN: TOKEN, TDA_DEFAULT_OWNER: 'a b' }, 'TDA_DEFAULT_OWNER'],
    [
      'a running-runs limit of 0',
      { TDA_API_TOKEN: TOKEN, TDA_MAX_RUNNING_RUNS: '0' },
      'TDA_MAX_RUNNING_RUNS',
    ],
    [
      'a fractional active-runs quota',
      { TDA_API_TOKEN: TOKEN, TDA_MAX_ACTIVE_RUNS_PER_OWNER: '2.5' },
      'TDA_MAX_ACTIVE_RUNS_PER_OWNER',
    ],
    [
      'a deadline of 5 s',
      { TDA_API_TOKEN: TOKEN, TDA_DEFAULT_RUN_DEADLINE_SECONDS: '5' },
      'TDA_DEFAULT_RUN_DEADLINE_SECONDS',
    ],
    [
      'emulators without hosts',
      { TDA_API_TOKEN: TOKEN, TDA_BACKEND: 'emulators' },
      'FIRESTORE_EMULATOR_HOST',
    ],
  ])('rejects %s naming the variable, never echoing values', (_, env, variable) => {
    let thrown: unknown;
    try {
      loadOrchestratorConfig(env);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    const message = (thrown as ConfigError).message;
    expect(message).toContain(variable);
    expect(message).not.toContain('short');
  });
});
