import { ConfigError } from '@tda/config';
import { z } from 'zod';

/**
 * How step-ready messages reach a worker service (part of workerServiceEnv):
 * - `pull` (default): a streaming pull on its step-ready subscription (Worker Pools, local runs);
 * - `push`: Pub/Sub pushes them to `POST /pubsub/push` on PORT (Cloud Run Services, which have
 *   no CPU between requests); no pull stream is opened. Needs the OIDC audience configured on the
 *   push subscription and the email of the push service account, both checked on every request.
 */
export const workerIngressEnv = {
  TDA_INGRESS: z.enum(['pull', 'push']).default('pull'),
  /** The push subscription's OIDC audience (e.g. tda-worker-ohlcv-export); `aud` must equal it. */
  TDA_PUSH_AUDIENCE: z.string().trim().min(1).max(1024).optional(),
  /** The push identity, tda-pubsub-push@<project>.iam.gserviceaccount.com; `email` must equal it. */
  TDA_PUSH_SERVICE_ACCOUNT: z.email('must be a service account email').optional(),
} as const;

export interface WorkerIngressConfig {
  TDA_INGRESS: 'pull' | 'push';
  TDA_PUSH_AUDIENCE?: string | undefined;
  TDA_PUSH_SERVICE_ACCOUNT?: string | undefined;
}

export type WorkerIngress =
  { mode: 'pull' } | { mode: 'push'; audience: string; serviceAccountEmail: string };

const PUSH_REQUIRED = ['TDA_PUSH_AUDIENCE', 'TDA_PUSH_SERVICE_ACCOUNT'] as const;

function missingPushSettings(config: WorkerIngressConfig): string[] {
  if (config.TDA_INGRESS !== 'push') return [];
  return PUSH_REQUIRED.filter((key) => config[key] === undefined);
}

/**
 * Cross-field rule for a worker's config schema (beside refineGoogleBackend):
 * `.superRefine(refineWorkerIngress)` — push needs both TDA_PUSH_* variables.
 */
export function refineWorkerIngress(value: WorkerIngressConfig, ctx: z.RefinementCtx): void {
  for (const key of missingPushSettings(value)) {
    ctx.addIssue({ code: 'custom', path: [key], message: 'is required when TDA_INGRESS=push' });
  }
}

/**
 * The ingress a validated config selects; a push config without its TDA_PUSH_* settings (a schema
 * that skipped refineWorkerIngress) is a ConfigError naming them, raised at boot.
 */
export function workerIngress(service: string, config: WorkerIngressConfig): WorkerIngress {
  const missing = missingPushSettings(config);
  if (missing.length > 0) {
    throw new ConfigError(
      service,
      missing.map((key) => `${key}: is required when TDA_INGRESS=push`),
    );
  }
  const { TDA_PUSH_AUDIENCE: audience, TDA_PUSH_SERVICE_ACCOUNT: serviceAccountEmail } = config;
  if (
    config.TDA_INGRESS === 'pull' ||
    audience === undefined ||
    serviceAccountEmail === undefined
  ) {
    return { mode: 'pull' };
  }
  return { mode: 'push', audience, serviceAccountEmail };
}
