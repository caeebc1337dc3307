import 'reflect-metadata';
import { runWorkerMain } from '@tda/worker-kit';
import { LLM_REPORT_SERVICE } from './config';
import { bootstrapLlmReportWorker } from './worker-llm-report.bootstrap';

/**
 * Standalone boot:
 * `SWC_NODE_PROJECT=tsconfig.runtime.json node -r @swc-node/register services/worker-llm-report/src/main.ts`
 */
void runWorkerMain({ service: LLM_REPORT_SERVICE, boot: () => bootstrapLlmReportWorker() });
