import 'reflect-metadata';
import { runBacktestThreadIfWorker } from '@tda/backtest-parallel';
import { runWorker } from '@tda/worker-kit';
import { backtestWorker } from './backtest.worker';

/**
 * `SWC_NODE_PROJECT=tsconfig.runtime.json node -r @swc-node/register services/worker-backtest/src/main.ts`
 * The bundle is also its own stage-B thread entry (TDA_BACKTEST_PARALLEL_WORKERS > 1): a thread
 * serves stage B and starts nothing else.
 */
if (!runBacktestThreadIfWorker()) void runWorker(backtestWorker);
