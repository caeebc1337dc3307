import 'reflect-metadata';
import { runWorkerMain } from '@tda/worker-kit';
import { OHLCV_EXPORT_SERVICE } from './config';
import { bootstrapOhlcvExportWorker } from './worker-ohlcv-export.bootstrap';

/**
 * Standalone boot:
 * `SWC_NODE_PROJECT=tsconfig.runtime.json node -r @swc-node/register services/worker-ohlcv-export/src/main.ts`
 */
void runWorkerMain({ service: OHLCV_EXPORT_SERVICE, boot: () => bootstrapOhlcvExportWorker() });
