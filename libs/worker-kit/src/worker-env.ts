import { backendEnv, type BackendConfig } from '@tda/backends';
import { z } from 'zod';
import type { StepHarnessPolicy } from './harness-policy';
import { workerIngressEnv } from './worker-ingress';
import { workerStepPolicyEnv } from './worker-step-policy';

/**
 * Env fields every worker service reads: the shared backend env, its port and log level, the
 * optional TDA_STEP_* step policy overrides (workerStepPolicyEnv) and the ingress
 * (workerIngressEnv: TDA_INGRESS pull | push, TDA_PUSH_AUDIENCE, TDA_PUSH_SERVICE_ACCOUNT). A
 * worker's config.ts spreads these into its own single zod schema (with refineGoogleBackend and
 * refineWorkerIngress).
 */
export const workerServiceEnv = {
  ...backendEnv,
  ...workerStepPolicyEnv,
  ...workerIngressEnv,
  /** /healthz, /metrics and the HTTP ingress routes (Cloud Run needs a listening port anyway). */
  PORT: z.coerce.number().int().min(0).max(65_535).default(8080),
  TDA_LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).default('info'),
} as const;

/** The worker env alone (tests, tools); a service extends workerServiceEnv in its own schema. */
export const workerServiceConfigSchema = z.object(workerServiceEnv);

/** What every worker reads of its config: BackendConfig, PORT, TDA_LOG_LEVEL, TDA_STEP_*, TDA_INGRESS, TDA_PUSH_*. */
export type WorkerServiceConfig = z.infer<typeof workerServiceConfigSchema>;

export interface StepWorkerSettings {
  prefix: string;
  policy: Pick<StepHarnessPolicy, 'artifactBucket' | 'artifactPrefix' | 'topicPrefix'>;
}

/** The createStepWorker options a backend config decides: the Pub/Sub prefix and the artifact names. */
export function stepWorkerSettings(
  config: Pick<
    BackendConfig,
    'TDA_ARTIFACTS_BUCKET' | 'TDA_ARTIFACTS_PREFIX' | 'TDA_PUBSUB_PREFIX'
  >,
): StepWorkerSettings {
  return {
    prefix: config.TDA_PUBSUB_PREFIX,
    policy: {
      artifactBucket: config.TDA_ARTIFACTS_BUCKET,
      artifactPrefix: config.TDA_ARTIFACTS_PREFIX,
      topicPrefix: config.TDA_PUBSUB_PREFIX,
    },
  };
}
