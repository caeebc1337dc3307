import 'reflect-metadata';
import { runWorker } from '@tda/worker-kit';
import { chartExportWorker } from './chart-export.worker';

/** `SWC_NODE_PROJECT=tsconfig.runtime.json node -r @swc-node/register services/worker-chart-export/src/main.ts` */
void runWorker(chartExportWorker);
