import type { LlmPrompt, LlmSchema } from '@tda/contracts';
import {
  isRegistryId,
  type PromptRegistry,
  type PromptRegistryWriter,
  type RegistryWriteMode,
} from './prompt-registry.port';
import { parsePromptDocument, parseSchemaDocument } from './registry-documents';

export interface InMemoryPromptRegistryOptions {
  prompts?: readonly LlmPrompt[];
  schemas?: readonly LlmSchema[];
}

/**
 * The registry in memory (memory mode, tests). Stores copies of the raw documents, so a test can
 * plant a broken one with `putRawDocument` and see the same RegistryDocumentInvalidError the
 * Firestore adapter gives.
 */
export class InMemoryPromptRegistry implements PromptRegistry, PromptRegistryWriter {
  private readonly prompts = new Map<string, unknown>();
  private readonly schemas = new Map<string, unknown>();

  constructor(options: InMemoryPromptRegistryOptions = {}) {
    for (const prompt of options.prompts ?? []) {
      this.prompts.set(
        prompt.promptId,
        structuredClone(parsePromptDocument(prompt.promptId, prompt)),
      );
    }
    for (const schema of options.schemas ?? []) {
      this.schemas.set(
        schema.schemaId,
        structuredClone(parseSchemaDocument(schema.schemaId, schema)),
      );
    }
  }

  async getPrompt(promptId: string): Promise<LlmPrompt | null> {
    if (!isRegistryId(promptId)) return null;
    const raw = this.prompts.get(promptId);
    return raw === undefined ? null : parsePromptDocument(promptId, structuredClone(raw));
  }

  async getSchema(schemaId: string): Promise<LlmSchema | null> {
    if (!isRegistryId(schemaId)) return null;
    const raw = this.schemas.get(schemaId);
    return raw === undefined ? null : parseSchemaDocument(schemaId, structuredClone(raw));
  }

  async savePrompt(prompt: LlmPrompt, mode: RegistryWriteMode): Promise<{ written: boolean }> {
    const doc = parsePromptDocument(prompt.promptId, prompt);
    if (mode === 'create' && this.prompts.has(doc.promptId)) return { written: false };
    this.prompts.set(doc.promptId, structuredClone(doc));
    return { written: true };
  }

  async saveSchema(schema: LlmSchema, mode: RegistryWriteMode): Promise<{ written: boolean }> {
    const doc = parseSchemaDocument(schema.schemaId, schema);
    if (mode === 'create' && this.schemas.has(doc.schemaId)) return { written: false };
    this.schemas.set(doc.schemaId, structuredClone(doc));
    return { written: true };
  }

  /** Test hook: stores `data` as is, bypassing validation. */
  putRawDocument(collection: 'prompts' | 'schemas', id: string, data: unknown): void {
    (collection === 'prompts' ? this.prompts : this.schemas).set(id, structuredClone(data));
  }
}
