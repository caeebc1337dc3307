import { googleBackendEnv } from '@tda/config';
import { z } from 'zod';

/**
 * Env fields every service that touches runs, messages or artifacts shares. Each service spreads
 * these into its own single zod schema (one schema per service, validated at boot).
 */
export const backendEnv = {
  ...googleBackendEnv,
  /** Bucket of the gs:// artifact URIs (in memory/emulators mode mapped under TDA_DATA_DIR). */
  TDA_ARTIFACTS_BUCKET: z
    .string()
    .regex(/^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$/, 'must be a valid GCS bucket name')
    .default('tda-artifacts'),
  TDA_ARTIFACTS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/, 'must be a relative path without dots')
    .default('runs'),
  /** Local directory holding gs://bucket/path objects in memory and emulators modes. */
  TDA_DATA_DIR: z.string().min(1).default('.data'),
  /** Pub/Sub resource name prefix (topics tda-step-ready-*, ...). */
  TDA_PUBSUB_PREFIX: z
    .string()
    .regex(/^[a-z][a-z0-9-]{1,30}$/)
    .default('tda'),
} as const;

export const backendConfigSchema = z.object(backendEnv);
export type BackendConfig = z.infer<typeof backendConfigSchema>;
