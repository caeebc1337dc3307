import { backendEnv } from '@tda/backends';
import { marketDataEnv } from '@tda/market-data';
import { loadConfig, refineGoogleBackend, type EnvSource } from '@tda/config';
import { OWNER_ID_PATTERN } from '@tda/contracts';
import { z } from 'zod';

export const ORCHESTRATOR_SERVICE = 'orchestrator';

/** Who a request acts for (contracts common OwnerId): also the X-TDA-Owner header's shape. */
export { OWNER_ID_PATTERN } from '@tda/contracts';

const nonNegativeMs = (fallback: number) => z.coerce.number().int().min(0).default(fallback);
const runLimit = (fallback: number) => z.coerce.number().int().min(1).max(10_000).default(fallback);

/**
 * The orchestrator's environment, the one schema validated at boot (DESIGN.md §7). Numbers come
 * from env strings, hence `coerce`.
 */
export const orchestratorConfigSchema = z
  .object({
    ...backendEnv,
    // The same source the OHLCV worker reads: the run's asOf is checked against it at trigger.
    ...marketDataEnv,
    PORT: z.coerce.number().int().min(0).max(65_535).default(8080),
    /**
     * Directory of the built web console (`npm run console:build` → dist/console), served at /
     * with deep links; unset: no console (/ answers 404 as any unknown route).
     */
    TDA_CONSOLE_DIR: z.string().min(1).optional(),
    /**
     * The operator credential: an admin acting for TDA_DEFAULT_OWNER, for bootstrapping (create
     * the first API tokens) and automation that cannot hold a stored token. Required: there is
     * no anonymous mode; the local launcher generates one. People use API tokens.
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
    /**
     * Operator override of the claims per step before an expired lease fails it (LEASE_EXPIRED),
     * for every step type. Unset (the default): the maxAttempts the claiming worker recorded in
     * the step, else seed 004's default (flow-engine DEFAULT_STEP_POLICY.maxAttempts: 3).
     */
    TDA_MAX_STEP_ATTEMPTS: z.coerce.number().int().min(1).max(100).optional(),
    /**
     * Grace past a step's deadlineAt (claim + the worker's timeout) before the reconciler fails
     * a step whose worker still holds the lease with STEP_TIMEOUT (the worker's own timer should
     * have finalized it).
     */
    TDA_STEP_TIMEOUT_GRACE_MS: nonNegativeMs(15_000),
    /** Runs one reconcile pass (timer or /admin/reconcile) looks at; the report says truncated. */
    TDA_RECONCILE_MAX_RUNS: z.coerce.number().int().min(1).max(10_000).default(1_000),
    /**
     * Ended runs (FAILED, and CANCELLED, each newest-created first) one reconcile pass also looks
     * at for steps left RUNNING by a dead worker (closed CANCELLED once the lease expired); per
     * status; 0 = never.
     */
    TDA_RECONCILE_ENDED_RUNS: z.coerce.number().int().min(0).max(10_000).default(200),
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
    /**
     * Flow 5: dynamic steps (indicator steps and follow-up reports) one run may hold, and how
     * many expansions may chain (a follow-up asking again is depth 2). Fixed on each run at
     * trigger (run.expansionLimits); a request beyond them fails the run with
     * EXPANSION_LIMIT_EXCEEDED.
     */
    /**
     * Flow 7: the in-process schedule ticker fires due slots this often; 0 = off (in GCP Cloud
     * Scheduler calls POST /admin/schedules/tick every minute instead).
     */
    TDA_SCHEDULE_TICK_MS: z.coerce.number().int().min(0).max(3_600_000).default(15_000),
    TDA_MAX_DYNAMIC_STEPS: z.coerce.number().int().min(1).max(100).default(12),
    /** Seed 003 enable toggle: false → the /backtests/jobs routes are not mounted (404). */
    TDA_BACKTEST_JOBS_ENABLED: z.stringbool().default(true),
    /** Seed 003 `max_active_jobs_per_user`: queued + running backtest jobs per owner; one more is a 429. */
    TDA_BACKTEST_MAX_ACTIVE_JOBS_PER_OWNER: z.coerce.number().int().min(1).max(1_000).default(3),
    /** Points one walk-forward evaluation may have (each is a run of flow 4). */
    TDA_EVALUATION_MAX_POINTS: z.coerce.number().int().min(1).max(500).default(100),
    TDA_MAX_EXPANSION_DEPTH: z.coerce.number().int().min(1).max(10).default(1),
    /**
     * Queued runs (seed 004 `queued`): at most this many runs are RUNNING; a triggered run beyond
     * it stays PENDING and starts, in creation order, when a run ends.
     */
    TDA_MAX_RUNNING_RUNS: runLimit(20),
    /** RUNNING runs per owner; an owner at its limit does not hold up other owners' runs. */
    TDA_MAX_RUNNING_RUNS_PER_OWNER: runLimit(5),
    /**
     * Seed 003 `max_active_jobs_per_user` (active = PENDING + RUNNING): a trigger beyond it is
     * refused with 429 QUOTA_EXCEEDED and creates nothing.
     */
    TDA_MAX_ACTIVE_RUNS_PER_OWNER: runLimit(20),
    /**
     * Live event streams (GET /runs/{runId}/events, /events/stream) one owner may hold open at
     * once; one more is a 429.
     */
    TDA_SSE_MAX_STREAMS_PER_OWNER: z.coerce.number().int().min(1).max(1_000).default(10),
    /** A `: heartbeat` comment this often keeps proxies and clients from timing a quiet stream out. */
    TDA_SSE_HEARTBEAT_MS: z.coerce.number().int().min(1_000).max(300_000).default(15_000),
    /**
     * The server ends a stream after this long and the client reconnects with Last-Event-ID:
     * below Cloud Run's request timeout (3600 s for the orchestrator), so no stream is cut
     * mid-event by the platform.
     */
    TDA_SSE_MAX_STREAM_SECONDS: z.coerce.number().int().min(1).max(3_500).default(900),
    TDA_LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).default('info'),
    /**
     * A second admin credential for callers that cannot hold TDA_API_TOKEN, such as Cloud
     * Scheduler (its OIDC token takes the Authorization header): a Google-signed ID token whose
     * `aud` is this value and whose `email` is TDA_ADMIN_OIDC_SERVICE_ACCOUNT. Both or neither.
     */
    TDA_ADMIN_OIDC_AUDIENCE: z.string().min(1).max(500).optional(),
    TDA_ADMIN_OIDC_SERVICE_ACCOUNT: z.email().optional(),
    /**
     * People signing in with a Google ID token: its `aud` (the OAuth client id it was issued
     * for). Their verified email must be mapped to an owner (`tda identities add`). Unset: no
     * Google ID tokens of people are accepted.
     */
    TDA_USER_OIDC_AUDIENCE: z.string().min(1).max(500).optional(),
    /**
     * The console behind Identity-Aware Proxy: the `aud` of IAP's signed header
     * (`/projects/<number>/locations/<region>/services/<service>` or
     * `/projects/<number>/global/backendServices/<id>`). Unset: the header is ignored.
     */
    TDA_IAP_AUDIENCE: z
      .string()
      .regex(/^\/projects\/[0-9]+\//, 'must start with /projects/<number>/')
      .optional(),
  })
  .superRefine(refineGoogleBackend)
  .superRefine((value, ctx) => {
    const audience = value.TDA_ADMIN_OIDC_AUDIENCE !== undefined;
    const account = value.TDA_ADMIN_OIDC_SERVICE_ACCOUNT !== undefined;
    if (audience !== account) {
      ctx.addIssue({
        code: 'custom',
        path: [audience ? 'TDA_ADMIN_OIDC_SERVICE_ACCOUNT' : 'TDA_ADMIN_OIDC_AUDIENCE'],
        message: 'TDA_ADMIN_OIDC_AUDIENCE and TDA_ADMIN_OIDC_SERVICE_ACCOUNT are set together',
      });
    }
  });

export type OrchestratorConfig = z.infer<typeof orchestratorConfigSchema>;

/** Boot-time config; tests pass their own env (only TDA_API_TOKEN is required). */
export function loadOrchestratorConfig(env?: EnvSource): OrchestratorConfig {
  return loadConfig(ORCHESTRATOR_SERVICE, orchestratorConfigSchema, env);
}
