import { refineGoogleBackend } from '@tda/config';
import { refineWorkerIngress, workerServiceEnv } from '@tda/worker-kit';
import { z } from 'zod';
import { llmEnv } from './gemini/llm-env';

/**
 * The environment of a worker whose steps ask a model (LLM_REPORT, LLM_RECOMMENDATION), validated
 * at boot (DESIGN.md §7): the shared worker env (with the TDA_STEP_* policy overrides), the LLM
 * provider env (Gemini API key / Vertex AI; neither → the step type's offline client) and the
 * seed 002 timeout policy. Numbers come from env strings, hence `coerce`.
 *
 * The step timeout: TDA_LLM_STEP_TIMEOUT_SECONDS when set (the more specific setting wins), else
 * the shared TDA_STEP_TIMEOUT_SECONDS, else the step type's policy (`policyTimeoutMs`). The parsed
 * config's TDA_LLM_STEP_TIMEOUT_SECONDS is that effective value, so the harness deadline and the
 * finalize budget check use the same number.
 */
export function llmWorkerConfigSchema(policyTimeoutMs: number) {
  return z
    .object({
      ...workerServiceEnv,
      ...llmEnv,
      /** Step deadline from the claim; wins over TDA_STEP_TIMEOUT_SECONDS (see above). */
      TDA_LLM_STEP_TIMEOUT_SECONDS: z.coerce.number().int().min(30).max(3_600).optional(),
      /** Upper bound of one model request (seed 002: 600 s). */
      TDA_LLM_REQUEST_DEADLINE_SECONDS: z.coerce.number().int().min(1).max(3_600).default(600),
      /** Reserve kept to write the artifact and finalize (seed 002: 120 s). */
      TDA_LLM_FINALIZE_BUDGET_SECONDS: z.coerce.number().int().min(1).max(3_600).default(120),
    })
    .superRefine(refineGoogleBackend)
    .superRefine(refineWorkerIngress)
    .transform((config) => ({
      ...config,
      TDA_LLM_STEP_TIMEOUT_SECONDS:
        config.TDA_LLM_STEP_TIMEOUT_SECONDS ??
        config.TDA_STEP_TIMEOUT_SECONDS ??
        policyTimeoutMs / 1_000,
    }))
    .superRefine((config, ctx) => {
      if (config.TDA_LLM_FINALIZE_BUDGET_SECONDS >= config.TDA_LLM_STEP_TIMEOUT_SECONDS) {
        ctx.addIssue({
          code: 'custom',
          path: ['TDA_LLM_FINALIZE_BUDGET_SECONDS'],
          message: `must be less than the step timeout (${config.TDA_LLM_STEP_TIMEOUT_SECONDS} s from TDA_LLM_STEP_TIMEOUT_SECONDS, else TDA_STEP_TIMEOUT_SECONDS): no time would be left for the model`,
        });
      }
    });
}

export type LlmWorkerConfig = z.infer<ReturnType<typeof llmWorkerConfigSchema>>;

/**
 * The harness policy an LLM worker decides over the shared one: the effective step timeout as the
 * harness deadline. Its own bootstrap and the local launcher pass it as `policy`. The seconds may
 * be fractional (taken from TDA_STEP_TIMEOUT_SECONDS), hence the rounding to whole milliseconds.
 */
export function llmWorkerHarnessPolicy(config: LlmWorkerConfig): { timeoutMs: number } {
  return { timeoutMs: Math.round(config.TDA_LLM_STEP_TIMEOUT_SECONDS * 1_000) };
}
