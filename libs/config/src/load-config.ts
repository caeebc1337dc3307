import { TdaError } from '@tda/contracts';
import { z } from 'zod';

/** Raised at boot when the environment does not satisfy a service's config schema. */
export class ConfigError extends TdaError {
  constructor(
    readonly service: string,
    readonly problems: string[],
  ) {
    super(
      'INVALID_REQUEST',
      `Invalid configuration for ${service}:\n${problems.map((p) => `  - ${p}`).join('\n')}`,
      { details: { service, problems } },
    );
  }
}

export type EnvSource = Readonly<Record<string, string | undefined>>;

/**
 * Validates the environment against one service's zod schema and returns the typed config.
 * This module is the only place in the code base that reads process.env (DESIGN.md §7); services
 * call it once at boot and pass the typed result down. Tests pass their own `env`.
 */
export function loadConfig<S extends z.ZodType>(
  service: string,
  schema: S,
  env: EnvSource = process.env,
): z.infer<S> {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => {
    const key = issue.path.join('.') || '(root)';
    // Never echo the received value: it may be a secret.
    return `${key}: ${issue.message}`;
  });
  throw new ConfigError(service, problems);
}

/** `TDA_BACKEND` (DESIGN.md §7): embedded memory, the Google emulators, or real GCP. */
export const backendSchema = z.enum(['memory', 'emulators', 'gcp']);
export type Backend = z.infer<typeof backendSchema>;

/** host:port as used by FIRESTORE_EMULATOR_HOST / PUBSUB_EMULATOR_HOST. */
export const hostPortSchema = z
  .string()
  .regex(/^[A-Za-z0-9.-]+:[0-9]{1,5}$/, 'must be host:port, e.g. 127.0.0.1:8080');

/** Shared env fields every service reads to reach Firestore and Pub/Sub. */
export const googleBackendEnv = {
  TDA_BACKEND: backendSchema.default('memory'),
  GOOGLE_CLOUD_PROJECT: z.string().min(1).default('tda-local'),
  FIRESTORE_EMULATOR_HOST: hostPortSchema.optional(),
  PUBSUB_EMULATOR_HOST: hostPortSchema.optional(),
} as const;

/**
 * Cross-field rule: the emulators backend needs both emulator hosts; gcp must not point at an
 * emulator (that would silently write to a local process in production).
 */
export function refineGoogleBackend(
  value: {
    TDA_BACKEND: Backend;
    FIRESTORE_EMULATOR_HOST?: string | undefined;
    PUBSUB_EMULATOR_HOST?: string | undefined;
  },
  ctx: z.RefinementCtx,
): void {
  if (value.TDA_BACKEND === 'emulators') {
    for (const key of ['FIRESTORE_EMULATOR_HOST', 'PUBSUB_EMULATOR_HOST'] as const) {
      if (value[key] === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: 'is required when TDA_BACKEND=emulators',
        });
      }
    }
  }
  if (value.TDA_BACKEND === 'gcp') {
    for (const key of ['FIRESTORE_EMULATOR_HOST', 'PUBSUB_EMULATOR_HOST'] as const) {
      if (value[key] !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: 'must not be set when TDA_BACKEND=gcp',
        });
      }
    }
  }
}

/**
 * A snapshot of the process environment, for a launcher that hands the same variables to several
 * services' own config schemas (each still validates them with loadConfig).
 */
export function processEnv(): EnvSource {
  return { ...process.env };
}
