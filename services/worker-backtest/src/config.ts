import { refineGoogleBackend } from '@tda/config';
import { marketDataEnv } from '@tda/market-data';
import { refineWorkerIngress, workerServiceEnv } from '@tda/worker-kit';
import { z } from 'zod';

/**
 * The BACKTEST worker's environment, validated at boot (DESIGN.md §7). Only the run's inputs
 * affect a result; these settings change how fast and how often it reports, never what it finds.
 */
export const backtestConfigSchema = z
  .object({
    /** Backend env, PORT, TDA_LOG_LEVEL, TDA_STEP_* and the ingress, shared by every worker. */
    ...workerServiceEnv,
    /** TDA_MARKET_DATA, TDA_CCXT_*, TDA_MARKET_DATA_DIR: the same for every reader of candles. */
    ...marketDataEnv,
    /** Seed 003 enable toggle: false → the worker logs service_disabled and exits 0. */
    TDA_BACKTEST_ENABLED: z.stringbool().default(true),
    /** worker_threads per job for stage B (seed 003 parallel_workers; default 1). */
    TDA_BACKTEST_PARALLEL_WORKERS: z.coerce.number().int().min(1).max(16).default(1),
    /** Variants between two progress / cancel checks (a batch). */
    TDA_BACKTEST_BATCH_SIZE: z.coerce.number().int().min(10).max(100_000).default(1_000),
    /** Best-so-far snapshots no more often than this (seed 003 snapshot_seconds). */
    TDA_BACKTEST_SNAPSHOT_SECONDS: z.coerce.number().min(0).max(3_600).default(5),
    /** …and no more often than every this many variants (seed 003 snapshot_variants_step). */
    TDA_BACKTEST_SNAPSHOT_VARIANTS_STEP: z.coerce.number().int().min(1).default(10_000),
    /** Jobs one instance runs at once (scale with replicas instead; seed 003). */
    TDA_BACKTEST_MAX_CONCURRENT_JOBS: z.coerce.number().int().min(1).max(8).default(1),
  })
  .superRefine(refineGoogleBackend)
  .superRefine(refineWorkerIngress);

export type BacktestConfig = z.infer<typeof backtestConfigSchema>;
