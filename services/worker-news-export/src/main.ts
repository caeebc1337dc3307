import 'reflect-metadata';
import { runWorker } from '@tda/worker-kit';
import { newsExportWorker } from './news-export.worker';

/** `SWC_NODE_PROJECT=tsconfig.runtime.json node -r @swc-node/register services/worker-news-export/src/main.ts` */
void runWorker(newsExportWorker);
