import { backendEnv } from '@tda/backends';
import { loadConfig, type EnvSource } from '@tda/config';
import { z } from 'zod';

const flag = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0'])
    .default(fallback ? 'true' : 'false')
    .transform((v) => v === 'true' || v === '1');

/** `npm start`: everything runs in one process; the services' own schemas validate the rest. */
export const localStackConfigSchema = z.object({
  ...backendEnv,
  /** auto = the emulators when gcloud is installed, otherwise the in-memory backend. */
  TDA_BACKEND: z.enum(['auto', 'memory', 'emulators', 'gcp']).default('auto'),
  PORT: z.coerce.number().int().min(0).max(65_535).default(8080),
  /** Bearer token of the API; generated when absent and written to <data dir>/local-api.json. */
  TDA_API_TOKEN: z.string().min(16).optional(),
  /** Trigger the demo run at start and show its progress. */
  TDA_DEMO: flag(true),
  /** The demo is what TDA is for: a recommendation sized against the paper account `demo`. */
  TDA_DEMO_FLOW: z.string().default('recommendation_with_account_v1'),
  TDA_DEMO_SYMBOL: z.string().default('BTC-USDT'),
  /** The account of the demo recommendation (flows that take scope.accountId). */
  TDA_DEMO_ACCOUNT: z.string().default('demo'),
  /** Stop after the demo run finished (for scripted checks); default: keep serving. */
  TDA_EXIT_AFTER_DEMO: flag(false),
  /** A built console to serve; unset: `npm start` builds services/console/ into dist/console when stale. */
  TDA_CONSOLE_DIR: z.string().min(1).optional(),
  TDA_LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).default('info'),
});
export type LocalStackConfig = z.infer<typeof localStackConfigSchema>;

export function loadLocalStackConfig(env?: EnvSource): LocalStackConfig {
  return loadConfig('local-stack', localStackConfigSchema, env);
}
