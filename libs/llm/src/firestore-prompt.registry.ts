import { type Firestore, Timestamp } from '@google-cloud/firestore';
import type { LlmPrompt, LlmSchema } from '@tda/contracts';
import {
  DEFAULT_PROMPTS_COLLECTION,
  DEFAULT_SCHEMAS_COLLECTION,
  isRegistryId,
  type PromptRegistry,
  type PromptRegistryWriter,
  type RegistryWriteMode,
} from './prompt-registry.port';
import { parsePromptDocument, parseSchemaDocument } from './registry-documents';

export interface FirestorePromptRegistryOptions {
  promptsCollection?: string;
  schemasCollection?: string;
}

/** gRPC status the Node client puts on `error.code` when create() finds the document. */
const GRPC_ALREADY_EXISTS = 6;

function isAlreadyExists(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    'code' in error &&
    (error as { code: unknown }).code === GRPC_ALREADY_EXISTS
  );
}

/**
 * Firestore Timestamps (an admin may write createdAt through the console) become RFC 3339
 * strings, the shape the contracts describe; everything else is left as read.
 */
function fromFirestore(value: unknown): unknown {
  if (value instanceof Timestamp) return value.toDate().toISOString();
  if (Array.isArray(value)) return value.map(fromFirestore);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, fromFirestore(v)]),
    );
  }
  return value;
}

/** Plain JSON data (no undefined, no class instances): what Firestore stores without options. */
function toFirestore(doc: object): Record<string, unknown> {
  return JSON.parse(JSON.stringify(doc)) as Record<string, unknown>;
}

/**
 * The registry on Firestore: `llm_prompts/{promptId}` and `llm_schemas/{schemaId}` (collection
 * names configurable so tests use unique ones). Reads validate against the contracts; writes
 * validate first, `create` uses Firestore's create-only write.
 */
export class FirestorePromptRegistry implements PromptRegistry, PromptRegistryWriter {
  private readonly promptsCollection: string;
  private readonly schemasCollection: string;

  constructor(
    private readonly firestore: Firestore,
    options: FirestorePromptRegistryOptions = {},
  ) {
    this.promptsCollection = options.promptsCollection ?? DEFAULT_PROMPTS_COLLECTION;
    this.schemasCollection = options.schemasCollection ?? DEFAULT_SCHEMAS_COLLECTION;
  }

  async getPrompt(promptId: string): Promise<LlmPrompt | null> {
    const data = await this.read(this.promptsCollection, promptId);
    return data === null ? null : parsePromptDocument(promptId, data);
  }

  async getSchema(schemaId: string): Promise<LlmSchema | null> {
    const data = await this.read(this.schemasCollection, schemaId);
    return data === null ? null : parseSchemaDocument(schemaId, data);
  }

  async savePrompt(prompt: LlmPrompt, mode: RegistryWriteMode): Promise<{ written: boolean }> {
    const doc = parsePromptDocument(prompt.promptId, prompt);
    return this.write(this.promptsCollection, doc.promptId, doc, mode);
  }

  async saveSchema(schema: LlmSchema, mode: RegistryWriteMode): Promise<{ written: boolean }> {
    const doc = parseSchemaDocument(schema.schemaId, schema);
    return this.write(this.schemasCollection, doc.schemaId, doc, mode);
  }

  private async read(collection: string, id: string): Promise<unknown> {
    if (!isRegistryId(id)) return null;
    const snapshot = await this.firestore.collection(collection).doc(id).get();
    if (!snapshot.exists) return null;
    return fromFirestore(snapshot.data());
  }

  private async write(
    collection: string,
    id: string,
    doc: object,
    mode: RegistryWriteMode,
  ): Promise<{ written: boolean }> {
    const ref = this.firestore.collection(collection).doc(id);
    if (mode === 'overwrite') {
      await ref.set(toFirestore(doc));
      return { written: true };
    }
    try {
      await ref.create(toFirestore(doc));
      return { written: true };
    } catch (error) {
      if (isAlreadyExists(error)) return { written: false };
      throw error;
    }
  }
}
