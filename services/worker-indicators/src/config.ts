import { refineGoogleBackend } from '@tda/config';
import { refineWorkerIngress, workerServiceEnv } from '@tda/worker-kit';
import { z } from 'zod';
import { DEFAULT_TAIL_POINTS } from './indicators.handler';

/**
 * The INDICATORS_ON_DEMAND worker's environment, validated at boot (DESIGN.md §7): the shared
 * worker env and the tail length. Numbers come from env strings, hence `coerce`.
 */
export const indicatorsOnDemandConfigSchema = z
  .object({
    /** Backend env, PORT, TDA_LOG_LEVEL, TDA_STEP_* and the ingress, shared by every worker. */
    ...workerServiceEnv,
    /**
     * Points per indicator tail in the artifact (1..50, default 30). The artifact is quoted in an
     * LLM prompt: 8 indicators × 50 points stay under ~40 KB.
     */
    TDA_INDICATORS_TAIL_POINTS: z.coerce.number().int().min(1).max(50).default(DEFAULT_TAIL_POINTS),
  })
  .superRefine(refineGoogleBackend)
  .superRefine(refineWorkerIngress);

export type IndicatorsOnDemandConfig = z.infer<typeof indicatorsOnDemandConfigSchema>;
