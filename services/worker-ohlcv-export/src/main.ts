import 'reflect-metadata';
import { runServiceMain } from '@tda/service-runtime';
import { OHLCV_EXPORT_SERVICE } from './config';
import { bootstrapOhlcvExportWorker } from './worker-ohlcv-export.bootstrap';

/**
 * Standalone boot:
 * `SWC_NODE_PROJECT=tsconfig.runtime.json node -r @swc-node/register services/worker-ohlcv-export/src/main.ts`
 */
void runServiceMain({ service: OHLCV_EXPORT_SERVICE, boot: () => bootstrapOhlcvExportWorker() });
