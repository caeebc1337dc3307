import { type LlmPrompt, type LlmSchema, PROMPT_ID_PATTERN } from '@tda/contracts';

/**
 * Read side of the prompt/schema registry (seed 002: `llm_prompts/{promptId}` and
 * `llm_schemas/{schemaId}`). A document that exists but breaks its contract is never returned
 * half-valid: it is a RegistryDocumentInvalidError (prompts: INVALID_STEP_INPUTS, schemas:
 * LLM_PROFILE_INVALID). An id that cannot be a document id (fails the versioned-id pattern) is
 * simply not found (null), without touching storage.
 */
export interface PromptRegistry {
  getPrompt(promptId: string): Promise<LlmPrompt | null>;
  getSchema(schemaId: string): Promise<LlmSchema | null>;
}

/** `create` never replaces an existing document; `overwrite` does. */
export type RegistryWriteMode = 'create' | 'overwrite';

/**
 * Write side (admin/seeding only; workers read). Documents are validated before they are
 * written. `written: false` means `create` found the document already there (left untouched).
 */
export interface PromptRegistryWriter {
  savePrompt(prompt: LlmPrompt, mode: RegistryWriteMode): Promise<{ written: boolean }>;
  saveSchema(schema: LlmSchema, mode: RegistryWriteMode): Promise<{ written: boolean }>;
}

export const DEFAULT_PROMPTS_COLLECTION = 'llm_prompts';
export const DEFAULT_SCHEMAS_COLLECTION = 'llm_schemas';

/** Doc ids of both collections are versioned ids (`<name>_v<N>`): storage-safe by construction. */
export function isRegistryId(id: string): boolean {
  return id.length <= 100 && PROMPT_ID_PATTERN.test(id);
}
