import type { Firestore } from '@google-cloud/firestore';
import { createFirestore } from '@tda/flow-store';
import {
  createLlmClientFromConfig,
  DEFAULT_PROMPTS,
  DEFAULT_SCHEMAS,
  FirestorePromptRegistry,
  InMemoryPromptRegistry,
  OfflineRecommenderClient,
  seedRegistry,
  type LlmClient,
  type PromptRegistry,
  type PromptRegistryWriter,
  type SeedPlanEntry,
} from '@tda/llm';
import type { LlmRecommendationConfig } from './config';

/** The Gemini client when credentials are configured, else the deterministic offline recommender. */
export function createLlmClient(config: LlmRecommendationConfig): LlmClient {
  return createLlmClientFromConfig(config) ?? new OfflineRecommenderClient();
}

/**
 * The prompt registry for the backend: memory mode holds the defaults in memory; emulators and
 * gcp read llm_prompts / llm_schemas from Firestore (the caller owns the client).
 */
export function createPromptRegistry(
  config: Pick<LlmRecommendationConfig, 'TDA_BACKEND'>,
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
 * Seeds the default prompts and schema create-only (existing documents are never replaced) in
 * memory and emulators mode; in gcp the registry is managed by `tda llm seed`, not by every boot.
 */
export async function seedDefaultRegistry(
  config: Pick<LlmRecommendationConfig, 'TDA_BACKEND'>,
  registry: PromptRegistry & PromptRegistryWriter,
): Promise<SeedPlanEntry[]> {
  if (config.TDA_BACKEND === 'gcp') return [];
  return seedRegistry(registry, { overwrite: false });
}

/** What the LLM_RECOMMENDATION worker needs besides the shared backends; `close` ends its own Firestore client. */
export interface LlmRecommendationRuntime {
  client: LlmClient;
  registry: PromptRegistry & PromptRegistryWriter;
  seeded: SeedPlanEntry[];
  close(): Promise<void>;
}

/**
 * Client (Gemini or offline) + prompt registry (in memory, or Firestore with its own client) with
 * the defaults seeded create-only: used by the worker's bootstrap and by the local launcher.
 */
export async function createLlmRecommendationRuntime(
  config: LlmRecommendationConfig,
): Promise<LlmRecommendationRuntime> {
  const client = createLlmClient(config); // a Vertex config without project fails here, cheaply
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
