import 'reflect-metadata';
import { runWorker } from '@tda/worker-kit';
import { llmRecommendationWorker } from './llm-recommendation.worker';

/** `SWC_NODE_PROJECT=tsconfig.runtime.json node -r @swc-node/register services/worker-llm-recommendation/src/main.ts` */
void runWorker(llmRecommendationWorker);
