import 'reflect-metadata';
import { runWorker } from '@tda/worker-kit';
import { ohlcvExportWorker } from './ohlcv-export.worker';

/** `SWC_NODE_PROJECT=tsconfig.runtime.json node -r @swc-node/register services/worker-ohlcv-export/src/main.ts` */
void runWorker(ohlcvExportWorker);
