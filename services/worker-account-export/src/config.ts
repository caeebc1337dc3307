import { refineGoogleBackend } from '@tda/config';
import { marketDataEnv } from '@tda/market-data';
import { refineWorkerIngress, workerServiceEnv } from '@tda/worker-kit';
import { z } from 'zod';

/** An unset and an empty variable mean the same (`TDA_ACCOUNT_CCXT_API_KEY=` in a compose file). */
const optionalText = z
  .string()
  .optional()
  .transform((value) => {
    const trimmed = value?.trim();
    return trimmed === undefined || trimmed === '' ? undefined : trimmed;
  });

const EXCHANGE_VARIABLES = [
  'TDA_ACCOUNT_CCXT_EXCHANGE',
  'TDA_ACCOUNT_CCXT_API_KEY',
  'TDA_ACCOUNT_CCXT_SECRET',
] as const;

/**
 * The ACCOUNT_EXPORT worker's environment, validated at boot (DESIGN.md §7): the shared worker
 * env, the market data selection of every candle-reading worker (`marketDataEnv`, the marks), and
 * the live exchange account. Without TDA_ACCOUNT_CCXT_* only paper accounts are served; with all
 * three, account documents with `exchange` read that exchange account. The key and secret are
 * secrets: never logged (service_started names the exchange only).
 */
export const accountExportConfigSchema = z
  .object({
    /** Backend env, PORT, TDA_LOG_LEVEL, TDA_STEP_* and the ingress, shared by every worker. */
    ...workerServiceEnv,
    /** TDA_MARKET_DATA, TDA_CCXT_EXCHANGE, TDA_CCXT_TIMEOUT_MS, TDA_MARKET_DATA_DIR. */
    ...marketDataEnv,
    /** ccxt exchange id of the live account (e.g. binance); unset: paper accounts only. */
    TDA_ACCOUNT_CCXT_EXCHANGE: z
      .string()
      .regex(/^[a-z0-9]{2,30}$/, 'must be a ccxt exchange id such as binance')
      .optional(),
    /** API key of the live account (read-only permissions suffice). Secret. */
    TDA_ACCOUNT_CCXT_API_KEY: optionalText,
    /** API secret of the live account. Secret. */
    TDA_ACCOUNT_CCXT_SECRET: optionalText,
    /** API passphrase, for exchanges that want one (OKX, KuCoin). Secret. */
    TDA_ACCOUNT_CCXT_PASSWORD: optionalText,
    /** `auto`: read derivative positions when the exchange has fetchPositions; `off`: balances only. */
    TDA_ACCOUNT_CCXT_POSITIONS: z.enum(['auto', 'off']).default('auto'),
    /**
     * How far a run's asOf may lie from now for a live account (it has no history). A live run's
     * default asOf is the start of the current hour, so this must exceed an hour.
     */
    TDA_ACCOUNT_LIVE_TOLERANCE_MINUTES: z.coerce.number().int().min(1).max(1_440).default(75),
  })
  .superRefine(refineGoogleBackend)
  .superRefine(refineWorkerIngress)
  .superRefine((config, ctx) => {
    const set = EXCHANGE_VARIABLES.filter((name) => config[name] !== undefined);
    if (set.length === 0 || set.length === EXCHANGE_VARIABLES.length) return;
    for (const name of EXCHANGE_VARIABLES.filter((n) => config[n] === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: [name],
        message: `is required with ${set.join(', ')} (a live exchange account needs all three)`,
      });
    }
  });

export type AccountExportConfig = z.infer<typeof accountExportConfigSchema>;

/** The live account's credentials, when all of TDA_ACCOUNT_CCXT_* are set. */
export function exchangeAccountSettings(config: AccountExportConfig):
  | {
      exchange: string;
      credentials: { apiKey: string; secret: string; password?: string };
    }
  | undefined {
  const {
    TDA_ACCOUNT_CCXT_EXCHANGE: exchange,
    TDA_ACCOUNT_CCXT_API_KEY: apiKey,
    TDA_ACCOUNT_CCXT_SECRET: secret,
    TDA_ACCOUNT_CCXT_PASSWORD: password,
  } = config;
  if (exchange === undefined || apiKey === undefined || secret === undefined) return undefined;
  return {
    exchange,
    credentials: { apiKey, secret, ...(password === undefined ? {} : { password }) },
  };
}
