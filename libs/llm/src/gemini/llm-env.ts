import { ConfigError } from '@tda/config';
import { z } from 'zod';
import { GeminiLlmClient } from './gemini-llm.client';

/** An unset and an empty variable mean the same (`GEMINI_API_KEY=` in a compose file). */
const optionalText = z
  .string()
  .optional()
  .transform((value) => {
    const trimmed = value?.trim();
    return trimmed === undefined || trimmed === '' ? undefined : trimmed;
  });

/**
 * The LLM fields of a worker's env schema (spread into its z.object, DESIGN.md §7).
 * GOOGLE_CLOUD_PROJECT is not repeated here: it is part of every service's backend env
 * (@tda/config googleBackendEnv) and the Vertex client uses that value.
 */
export const llmEnv = {
  /** Gemini API key (https://aistudio.google.com/apikey). Secret: never logged or echoed. */
  GEMINI_API_KEY: optionalText,
  /** `true` selects Vertex AI with Application Default Credentials (wins over an API key). */
  GOOGLE_GENAI_USE_VERTEXAI: z.stringbool().optional(),
  /** Vertex AI location (default `global`). */
  GOOGLE_CLOUD_LOCATION: z
    .string()
    .regex(/^[a-z][a-z0-9-]{0,62}$/, 'must be a location id such as global or europe-west4')
    .optional(),
  /** Endpoint override (a proxy, or a local fake server in tests). */
  TDA_GEMINI_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
} as const;

export const llmEnvSchema = z.object(llmEnv);
export type LlmEnvConfig = z.infer<typeof llmEnvSchema>;

/** What createLlmClientFromConfig reads: the llmEnv fields plus the backend's project id. */
export interface LlmClientConfig {
  GEMINI_API_KEY?: string | undefined;
  GOOGLE_GENAI_USE_VERTEXAI?: boolean | undefined;
  GOOGLE_CLOUD_PROJECT?: string | undefined;
  GOOGLE_CLOUD_LOCATION?: string | undefined;
  TDA_GEMINI_BASE_URL?: string | undefined;
}

export const DEFAULT_VERTEX_LOCATION = 'global';

/**
 * The Gemini client when credentials are configured, else null (the worker then uses the offline
 * analyst, DESIGN.md §7): GOOGLE_GENAI_USE_VERTEXAI=true → Vertex AI (ADC) in GOOGLE_CLOUD_PROJECT;
 * otherwise GEMINI_API_KEY → the Gemini API. Vertex without a project is a ConfigError at boot.
 */
export function createLlmClientFromConfig(config: LlmClientConfig): GeminiLlmClient | null {
  const baseUrl = config.TDA_GEMINI_BASE_URL;
  const endpoint = baseUrl !== undefined ? { baseUrl } : {};
  if (config.GOOGLE_GENAI_USE_VERTEXAI === true) {
    const project = config.GOOGLE_CLOUD_PROJECT?.trim() ?? '';
    if (project === '') {
      throw new ConfigError('llm', [
        'GOOGLE_CLOUD_PROJECT: is required when GOOGLE_GENAI_USE_VERTEXAI=true',
      ]);
    }
    return new GeminiLlmClient({
      vertexai: { project, location: config.GOOGLE_CLOUD_LOCATION ?? DEFAULT_VERTEX_LOCATION },
      ...endpoint,
    });
  }
  const apiKey = config.GEMINI_API_KEY?.trim() ?? '';
  if (apiKey !== '') return new GeminiLlmClient({ apiKey, ...endpoint });
  return null;
}
