import 'reflect-metadata';
import { runWorker } from '@tda/worker-kit';
import { backtestWorker } from './backtest.worker';

/** `SWC_NODE_PROJECT=tsconfig.runtime.json node -r @swc-node/register services/worker-backtest/src/main.ts` (also the bundle's stage-B thread entry: backtestWorker.isThread). */
void runWorker(backtestWorker);
