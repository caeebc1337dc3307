import { INDICATORS_ON_DEMAND_STEP } from '@tda/step-types';
import { defineWorker } from '@tda/worker-kit';
import { indicatorsOnDemandConfigSchema } from './config';
import { IndicatorsOnDemandHandler } from './indicators.handler';

/** The INDICATORS_ON_DEMAND worker: pure computation, nothing to open besides the harness's. */
export const indicatorsOnDemandWorker = defineWorker({
  descriptor: INDICATORS_ON_DEMAND_STEP,
  configSchema: indicatorsOnDemandConfigSchema,
  create(config) {
    const handler = new IndicatorsOnDemandHandler({
      tailPoints: config.TDA_INDICATORS_TAIL_POINTS,
    });
    return { handler, startedFields: { tailPoints: handler.tailPoints } };
  },
});
