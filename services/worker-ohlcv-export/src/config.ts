import { refineGoogleBackend } from '@tda/config';
import { refineWorkerIngress, workerServiceEnv } from '@tda/worker-kit';
import { z } from 'zod';

/**
 * The OHLCV worker's environment, validated at boot (DESIGN.md §7). Numbers come from env
 * strings, hence `coerce`.
 */
export const ohlcvExportConfigSchema = z
  .object({
    /** Backend env, PORT, TDA_LOG_LEVEL, TDA_STEP_* and the ingress (TDA_INGRESS, TDA_PUSH_*), shared by every worker. */
    ...workerServiceEnv,
    /** Where candles come from: the bundled real datasets (offline) or a live exchange. */
    TDA_MARKET_DATA: z.enum(['bundled', 'ccxt']).default('bundled'),
    /** ccxt exchange id when TDA_MARKET_DATA=ccxt (public endpoints only, no API keys). */
    TDA_CCXT_EXCHANGE: z
      .string()
      .regex(/^[a-z0-9]{2,30}$/, 'must be a ccxt exchange id such as binance')
      .default('binance'),
    /** Per-request timeout of the exchange client. */
    TDA_CCXT_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(120_000).default(10_000),
    /** Directory of the bundled CSV files; default: libs/market-data/data next to the sources. */
    TDA_MARKET_DATA_DIR: z.string().min(1).optional(),
    /** The still-forming last bucket: kept with complete=false ('marked') or left out. */
    TDA_OHLCV_INCOMPLETE_BUCKETS: z.enum(['marked', 'dropped']).default('marked'),
  })
  .superRefine(refineGoogleBackend)
  .superRefine(refineWorkerIngress);

export type OhlcvExportConfig = z.infer<typeof ohlcvExportConfigSchema>;
