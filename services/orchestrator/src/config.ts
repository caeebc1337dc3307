import { backendEnv } from '@tda/backends';
import { loadConfig, refineGoogleBackend, type EnvSource } from '@tda/config';
import { z } from 'zod';

export const ORCHESTRATOR_SERVICE = 'orchestrator';

/** Who a request acts for: also the shape accepted in the X-TDA-Owner header. */
export const OWNER_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.@:-]{0,199}$/;

const nonNegativeMs = (fallback: number) => z.coerce.number().int().min(0).default(fallback);

/**
 * The orchestrator's environment, the one schema validated at boot (DESIGN.md §7). Numbers come
 * from env strings, hence `coerce`.
 */
export const orchestratorConfigSchema = z
  .object({
    ...backendEnv,
    PORT: z.coerce.number().int().min(0).max(65_535).default(8080),
    /**
     * Bearer token of the admin API (every endpoint except /healthz and the API description).
     * Required: there is no anonymous mode; the local launcher generates one.
     */
    TDA_API_TOKEN: z.string().min(16, 'must be at least 16 characters'),
    /** Reconciler period; 0 disables the timer (the pass can still be run on demand). */
    TDA_RECONCILE_INTERVAL_MS: nonNegativeMs(30_000),
    /** READY steps not claimed for this long get their step-ready message published again. */
    TDA_READY_REPUBLISH_AFTER_MS: nonNegativeMs(60_000),
    /** Owner of runs triggered without an X-TDA-Owner header. */
    TDA_DEFAULT_OWNER: z
      .string()
      .regex(OWNER_ID_PATTERN, 'must be 1..200 of A-Z a-z 0-9 _ . @ : -')
      .default('local-user'),
    /** Claims per step before an expired lease fails it with LEASE_EXPIRED (seed 004: 3). */
    TDA_MAX_STEP_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(3),
    /**
     * Run timeout applied when a trigger gives no deadlineSeconds; 0 = runs without a deadline.
     * Not seed 004's 600 s: flow 1 runs two LLM reports one after the other, each allowed up to
     * 10 minutes (seed 002), so 600 s would time out healthy runs.
     */
    TDA_DEFAULT_RUN_DEADLINE_SECONDS: z.coerce
      .number()
      .int()
      .refine((v) => v === 0 || (v >= 10 && v <= 86_400), 'must be 0 or 10..86400')
      .default(3_600),
    TDA_LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).default('info'),
  })
  .superRefine(refineGoogleBackend);

export type OrchestratorConfig = z.infer<typeof orchestratorConfigSchema>;

/** Boot-time config; tests pass their own env (only TDA_API_TOKEN is required). */
export function loadOrchestratorConfig(env?: EnvSource): OrchestratorConfig {
  return loadConfig(ORCHESTRATOR_SERVICE, orchestratorConfigSchema, env);
}
