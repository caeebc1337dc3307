import 'reflect-metadata';
import { runServiceMain } from '@tda/service-runtime';
import { LLM_REPORT_SERVICE } from './config';
import { bootstrapLlmReportWorker } from './worker-llm-report.bootstrap';

/**
 * Standalone boot:
 * `SWC_NODE_PROJECT=tsconfig.runtime.json node -r @swc-node/register services/worker-llm-report/src/main.ts`
 */
void runServiceMain({ service: LLM_REPORT_SERVICE, boot: () => bootstrapLlmReportWorker() });
