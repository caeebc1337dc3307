import { runBacktestThreadIfWorker } from '@tda/backtest-parallel';
import { createConfiguredCandleSource, type MarketDataOverrides } from '@tda/market-data';
import { BACKTEST_STEP } from '@tda/step-types';
import { defineWorker, type WorkerCreateContext } from '@tda/worker-kit';
import { backtestConfigSchema } from './config';
import { BacktestHandler } from './backtest.handler';

/** The BACKTEST worker: candles from TDA_MARKET_DATA, the engine of libs/backtest. */
export const backtestWorker = defineWorker({
  descriptor: BACKTEST_STEP,
  configSchema: backtestConfigSchema,
  isThread: runBacktestThreadIfWorker,
  disabled: (config) =>
    config.TDA_BACKTEST_ENABLED ? undefined : 'TDA_BACKTEST_ENABLED=false (seed 003 toggle)',
  async create(config, { logger, overrides }: WorkerCreateContext<MarketDataOverrides>) {
    const settings = {
      batchSize: config.TDA_BACKTEST_BATCH_SIZE,
      parallelWorkers: config.TDA_BACKTEST_PARALLEL_WORKERS,
      snapshotMs: config.TDA_BACKTEST_SNAPSHOT_SECONDS * 1000,
      variantsStep: config.TDA_BACKTEST_SNAPSHOT_VARIANTS_STEP,
    };
    const handler = new BacktestHandler({
      candles: await createConfiguredCandleSource(config, overrides ?? {}),
      logger,
      settings,
    });
    return {
      handler,
      maxInFlight: config.TDA_BACKTEST_MAX_CONCURRENT_JOBS,
      // A job runs for minutes: pull one only with a free slot, so a waiting job goes to an
      // idle replica instead of queueing inside a busy one.
      delivery: 'on-demand',
      startedFields: { ...settings, marketData: config.TDA_MARKET_DATA },
    };
  },
});
