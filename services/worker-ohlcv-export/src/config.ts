import { refineGoogleBackend } from '@tda/config';
import { marketDataEnv } from '@tda/market-data';
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
    /** TDA_MARKET_DATA, TDA_CCXT_*, TDA_MARKET_DATA_DIR: the same for every reader of candles. */
    ...marketDataEnv,
    /** The still-forming last bucket: kept with complete=false ('marked') or left out. */
    TDA_OHLCV_INCOMPLETE_BUCKETS: z.enum(['marked', 'dropped']).default('marked'),
  })
  .superRefine(refineGoogleBackend)
  .superRefine(refineWorkerIngress);

export type OhlcvExportConfig = z.infer<typeof ohlcvExportConfigSchema>;
