import { PubSub } from '@google-cloud/pubsub';
import {
  createFirestore,
  FirestoreFlowRunStore,
  InMemoryFlowRunStore,
  type FlowRunStore,
} from '@tda/flow-store';
import {
  applyTopology,
  buildTopology,
  GooglePubSubBroker,
  InMemoryBroker,
  type MessageBroker,
} from '@tda/messaging';
import type { OrchestratorConfig } from './config';

export interface OrchestratorBackends {
  store: FlowRunStore;
  broker: MessageBroker;
  describe: string;
  close(): Promise<void>;
}

/**
 * Store + broker for TDA_BACKEND (DESIGN §7), for the standalone main.ts. Interim: the shared
 * @tda/backends factory replaces this once it is available. memory and emulators get the
 * Pub/Sub topology applied (they start empty); on gcp it is applied by deploy tooling.
 */
export async function createOrchestratorBackends(
  config: OrchestratorConfig,
): Promise<OrchestratorBackends> {
  const topology = buildTopology({ prefix: config.TDA_PUBSUB_PREFIX });
  if (config.TDA_BACKEND === 'memory') {
    const broker = new InMemoryBroker();
    broker.applyTopology(topology);
    return {
      store: new InMemoryFlowRunStore(),
      broker,
      describe: 'memory (in-process store and bus; runs are lost on exit)',
      close: () => broker.close(),
    };
  }
  const emulators = config.TDA_BACKEND === 'emulators';
  const firestore = createFirestore({
    projectId: config.GOOGLE_CLOUD_PROJECT,
    ...(emulators && config.FIRESTORE_EMULATOR_HOST !== undefined
      ? { emulatorHost: config.FIRESTORE_EMULATOR_HOST }
      : {}),
  });
  const pubsub = new PubSub({
    projectId: config.GOOGLE_CLOUD_PROJECT,
    ...(emulators ? { apiEndpoint: config.PUBSUB_EMULATOR_HOST, emulatorMode: true } : {}),
  });
  if (emulators) await applyTopology(pubsub, topology);
  const broker = new GooglePubSubBroker({ pubsub });
  return {
    store: new FirestoreFlowRunStore(firestore),
    broker,
    describe: emulators
      ? `emulators (Firestore ${String(config.FIRESTORE_EMULATOR_HOST)}, Pub/Sub ${String(config.PUBSUB_EMULATOR_HOST)})`
      : `gcp (project ${config.GOOGLE_CLOUD_PROJECT})`,
    close: async () => {
      await broker.close();
      await pubsub.close();
      await firestore.terminate();
    },
  };
}
