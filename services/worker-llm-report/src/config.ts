import { loadConfig, refineGoogleBackend, type EnvSource } from '@tda/config';
import { llmEnv } from '@tda/llm';
import { workerServiceEnv } from '@tda/worker-kit';
import { z } from 'zod';

export const LLM_REPORT_SERVICE = 'worker-llm-report';

/**
 * The LLM_REPORT worker's environment, validated at boot (DESIGN.md §7): the shared worker env,
 * the LLM provider env (Gemini API key / Vertex AI; neither → the offline analyst) and the seed
 * 002 timeout policy. Numbers come from env strings, hence `coerce`.
 */
export const llmReportConfigSchema = z
  .object({
    ...workerServiceEnv,
    ...llmEnv,
    /** Step deadline from the claim (seed 002: 780 s, the old Cloud Function timeout). */
    TDA_LLM_STEP_TIMEOUT_SECONDS: z.coerce.number().int().min(30).max(3_600).default(780),
    /** Upper bound of one model request (seed 002: 600 s). */
    TDA_LLM_REQUEST_DEADLINE_SECONDS: z.coerce.number().int().min(1).max(3_600).default(600),
    /** Reserve kept to write the artifact and finalize (seed 002: 120 s). */
    TDA_LLM_FINALIZE_BUDGET_SECONDS: z.coerce.number().int().min(1).max(3_600).default(120),
  })
  .superRefine(refineGoogleBackend)
  .superRefine((config, ctx) => {
    if (config.TDA_LLM_FINALIZE_BUDGET_SECONDS >= config.TDA_LLM_STEP_TIMEOUT_SECONDS) {
      ctx.addIssue({
        code: 'custom',
        path: ['TDA_LLM_FINALIZE_BUDGET_SECONDS'],
        message:
          'must be less than TDA_LLM_STEP_TIMEOUT_SECONDS (no time would be left for the model)',
      });
    }
  });

export type LlmReportConfig = z.infer<typeof llmReportConfigSchema>;

export function loadLlmReportConfig(env?: EnvSource): LlmReportConfig {
  return loadConfig(LLM_REPORT_SERVICE, llmReportConfigSchema, env);
}
