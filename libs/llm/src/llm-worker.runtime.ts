import type { Firestore } from '@google-cloud/firestore';
import { createFirestore } from '@tda/flow-store';
import { DEFAULT_PROMPTS, DEFAULT_SCHEMAS } from './default-registry';
import { FirestorePromptRegistry } from './firestore-prompt.registry';
import { createLlmClientFromConfig } from './gemini';
import { InMemoryPromptRegistry } from './in-memory-prompt.registry';
import type { LlmClient } from './llm-client.port';
import type { LlmWorkerConfig } from './llm-worker.config';
import type { PromptRegistry, PromptRegistryWriter } from './prompt-registry.port';
import { seedRegistry, type SeedPlanEntry } from './seed-registry';

/**
 * The prompt registry for the backend: memory mode holds the defaults in memory; emulators and
 * gcp read llm_prompts / llm_schemas from Firestore (the caller owns the client).
 */
export function createPromptRegistry(
  config: Pick<LlmWorkerConfig, 'TDA_BACKEND'>,
  firestore?: Firestore,
): PromptRegistry & PromptRegistryWriter {
  if (config.TDA_BACKEND === 'memory') {
    return new InMemoryPromptRegistry({ prompts: DEFAULT_PROMPTS, schemas: DEFAULT_SCHEMAS });
  }
  if (firestore === undefined) {
    throw new Error(`the ${config.TDA_BACKEND} backend needs a Firestore client for the registry`);
  }
  return new FirestorePromptRegistry(firestore);
}

/**
 * Seeds the default prompts and schemas create-only (existing documents are never replaced) in
 * memory and emulators mode; in gcp the registry is managed by `tda llm seed`, not by every boot.
 */
export async function seedDefaultRegistry(
  config: Pick<LlmWorkerConfig, 'TDA_BACKEND'>,
  registry: PromptRegistry & PromptRegistryWriter,
): Promise<SeedPlanEntry[]> {
  if (config.TDA_BACKEND === 'gcp') return [];
  return seedRegistry(registry, { overwrite: false });
}

/** What an LLM worker needs besides the shared backends; `close` ends its own Firestore client. */
export interface LlmWorkerRuntime {
  client: LlmClient;
  registry: PromptRegistry & PromptRegistryWriter;
  seeded: SeedPlanEntry[];
  close(): Promise<void>;
}

/**
 * Client (Gemini when credentials are configured, else the step type's deterministic offline
 * client) + prompt registry (in memory, or Firestore with its own client) with the defaults seeded
 * create-only: used by an LLM worker's bootstrap and by the local launcher.
 */
export async function createLlmWorkerRuntime(
  config: LlmWorkerConfig,
  offline: () => LlmClient,
): Promise<LlmWorkerRuntime> {
  // A Vertex config without a project fails here, cheaply, before any Firestore client exists.
  const client = createLlmClientFromConfig(config) ?? offline();
  const firestore =
    config.TDA_BACKEND === 'memory'
      ? undefined
      : createFirestore({
          projectId: config.GOOGLE_CLOUD_PROJECT,
          ...(config.TDA_BACKEND === 'emulators' && config.FIRESTORE_EMULATOR_HOST !== undefined
            ? { emulatorHost: config.FIRESTORE_EMULATOR_HOST }
            : {}),
        });
  const close = async (): Promise<void> => {
    await firestore?.terminate();
  };
  try {
    const registry = createPromptRegistry(config, firestore);
    const seeded = await seedDefaultRegistry(config, registry);
    return { client, registry, seeded, close };
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
}
