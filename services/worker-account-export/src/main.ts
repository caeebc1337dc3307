import 'reflect-metadata';
import { runWorker } from '@tda/worker-kit';
import { accountExportWorker } from './account-export.worker';

/** `SWC_NODE_PROJECT=tsconfig.runtime.json node -r @swc-node/register services/worker-account-export/src/main.ts` */
void runWorker(accountExportWorker);
