import 'reflect-metadata';
import { runServiceMain } from '@tda/service-runtime';
import { CHART_EXPORT_SERVICE } from './config';
import { bootstrapChartExportWorker } from './worker-chart-export.bootstrap';

/**
 * Standalone boot:
 * `SWC_NODE_PROJECT=tsconfig.runtime.json node -r @swc-node/register services/worker-chart-export/src/main.ts`
 */
void runServiceMain({ service: CHART_EXPORT_SERVICE, boot: () => bootstrapChartExportWorker() });
