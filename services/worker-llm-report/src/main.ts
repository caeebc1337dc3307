import 'reflect-metadata';
import { runWorker } from '@tda/worker-kit';
import { llmReportWorker } from './llm-report.worker';

/** `SWC_NODE_PROJECT=tsconfig.runtime.json node -r @swc-node/register services/worker-llm-report/src/main.ts` */
void runWorker(llmReportWorker);
