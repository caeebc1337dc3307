import 'reflect-metadata';
import { runWorker } from '@tda/worker-kit';
import { indicatorsOnDemandWorker } from './indicators.worker';

/** `SWC_NODE_PROJECT=tsconfig.runtime.json node -r @swc-node/register services/worker-indicators/src/main.ts` */
void runWorker(indicatorsOnDemandWorker);
