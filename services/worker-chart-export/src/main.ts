import 'reflect-metadata';
import { runWorkerMain } from '@tda/worker-kit';
import { CHART_EXPORT_SERVICE } from './config';
import { bootstrapChartExportWorker } from './worker-chart-export.bootstrap';

/**
 * Standalone boot:
 * `SWC_NODE_PROJECT=tsconfig.runtime.json node -r @swc-node/register services/worker-chart-export/src/main.ts`
 */
void runWorkerMain({ service: CHART_EXPORT_SERVICE, boot: () => bootstrapChartExportWorker() });
