import { ConfigError } from '@tda/config';
import { PubSub } from '@google-cloud/pubsub';
import { Storage } from '@google-cloud/storage';
import { FirestoreAccountStore, InMemoryAccountStore, type AccountStore } from '@tda/accounts';
import { FirestoreIdentityStore, InMemoryIdentityStore, type IdentityStore } from '@tda/identity';
import { GcsArtifactStore, LocalArtifactStore, type ArtifactStore } from '@tda/artifacts';
import {
  createFirestore,
  FirestoreEvaluationStore,
  FirestoreFlowRunStore,
  FirestoreScheduleStore,
  FirestoreSignalStore,
  InMemoryEvaluationStore,
  InMemoryFlowRunStore,
  InMemoryScheduleStore,
  InMemorySignalStore,
  type EvaluationStore,
  type FlowRunStore,
  type StepCheckpointStore,
  type ScheduleStore,
  type SignalStore,
} from '@tda/flow-store';
import {
  applyTopology,
  buildTopology,
  GooglePubSubBroker,
  InMemoryBroker,
  type MessageBroker,
  type Topology,
} from '@tda/messaging';
import {
  FirestoreReportIndexStore,
  InMemoryReportIndexStore,
  type ReportIndexStore,
} from '@tda/report-index';
import { resolve } from 'node:path';
import type { BackendConfig } from './backend-config';

/** The adapters behind the ports, for one TDA_BACKEND mode (DESIGN.md §7). */
export interface Backends {
  mode: BackendConfig['TDA_BACKEND'];
  store: FlowRunStore;
  /** Step checkpoints beside the run documents (the same store: flow_runs/{runId}/checkpoints). */
  checkpoints: StepCheckpointStore;
  broker: MessageBroker;
  artifacts: ArtifactStore;
  /** reports/{reportId} and recommendations/{recoId} (seed 001 index). */
  reportIndex: ReportIndexStore;
  /** accounts/{accountId}: paper accounts (in memory, or Firestore on the run store's client). */
  accounts: AccountStore;
  /** api_tokens and user_identities: who may call the API (orchestrator). */
  identities: IdentityStore;
  /** flow_schedules/{scheduleId}: flow 7 schedules (the orchestrator's ticker and API). */
  schedules: ScheduleStore;
  /** signals/{signalId}: flow 7 signals, create-only by (schedule, slot). */
  signals: SignalStore;
  /** evaluations/{evaluationId}: walk-forward evaluations of recommendations (orchestrator). */
  evaluations: EvaluationStore;
  topology: Topology;
  /** Human-readable description of where things live (printed by the launcher). */
  describe(): string[];
  close(): Promise<void>;
}

export interface CreateBackendsOptions {
  /**
   * Apply the Pub/Sub topology at start. Default: true for memory and emulators (they start
   * empty). Refused for gcp: there `tda infra apply` owns the topology, including push configs and
   * per-step ack deadlines that the plain topology would silently reset.
   */
  applyTopology?: boolean;
  /** In memory mode, the broker runs topology durations (backoff, ack deadline) this much faster. */
  memoryTimeScale?: number;
}

/**
 * Builds the store, broker and artifact store for the configured backend:
 * - memory: in-process store and bus, local artifacts (no Java, no network);
 * - emulators: Firestore and Pub/Sub emulators, local artifacts;
 * - gcp: Firestore, Pub/Sub and Cloud Storage with Application Default Credentials.
 * Artifact URIs are gs://<bucket>/... in every mode.
 */
export async function createBackends(
  config: BackendConfig,
  options: CreateBackendsOptions = {},
): Promise<Backends> {
  if (config.TDA_BACKEND === 'gcp' && options.applyTopology === true) {
    throw new ConfigError('backends', [
      'applyTopology: not with TDA_BACKEND=gcp (run `npx tda infra apply`: it owns the GCP topology)',
    ]);
  }
  const topology = buildTopology({ prefix: config.TDA_PUBSUB_PREFIX });
  return config.TDA_BACKEND === 'memory'
    ? memoryBackends(config, options, topology)
    : googleBackends(config, options, topology);
}

/** Everything in-process (a local store and bus; artifacts under the data dir). */
function memoryBackends(
  config: BackendConfig,
  options: CreateBackendsOptions,
  topology: Topology,
): Backends {
  const dataDir = resolve(config.TDA_DATA_DIR);
  const broker = new InMemoryBroker({ timeScale: options.memoryTimeScale ?? 1 });
  if (options.applyTopology ?? true) broker.applyTopology(topology);
  const store = new InMemoryFlowRunStore();
  return {
    mode: 'memory',
    store,
    checkpoints: store,
    broker,
    artifacts: new LocalArtifactStore({ dataDir }),
    reportIndex: new InMemoryReportIndexStore(),
    accounts: new InMemoryAccountStore(),
    identities: new InMemoryIdentityStore(),
    schedules: new InMemoryScheduleStore(),
    signals: new InMemorySignalStore(),
    evaluations: new InMemoryEvaluationStore(),
    topology,
    describe: () => [
      'backend: memory (in-process store and bus; runs are lost on exit)',
      `artifacts: gs://${config.TDA_ARTIFACTS_BUCKET}/... stored under ${dataDir}`,
    ],
    close: () => broker.close(),
  };
}

/** Firestore and Pub/Sub: the emulators (artifacts on disk) or GCP (artifacts in GCS). */
async function googleBackends(
  config: BackendConfig,
  options: CreateBackendsOptions,
  topology: Topology,
): Promise<Backends> {
  const emulators = config.TDA_BACKEND === 'emulators';
  const dataDir = resolve(config.TDA_DATA_DIR);
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
  if (options.applyTopology ?? emulators) await applyTopology(pubsub, topology);
  const broker = new GooglePubSubBroker({ pubsub });
  const store = new FirestoreFlowRunStore(firestore);
  const artifacts: ArtifactStore = emulators
    ? new LocalArtifactStore({ dataDir })
    : new GcsArtifactStore({ storage: new Storage({ projectId: config.GOOGLE_CLOUD_PROJECT }) });
  return {
    mode: emulators ? 'emulators' : 'gcp',
    store,
    checkpoints: store,
    broker,
    artifacts,
    reportIndex: new FirestoreReportIndexStore(firestore),
    accounts: new FirestoreAccountStore(firestore),
    identities: new FirestoreIdentityStore(firestore),
    schedules: new FirestoreScheduleStore(firestore),
    signals: new FirestoreSignalStore(firestore),
    evaluations: new FirestoreEvaluationStore(firestore),
    topology,
    describe: () =>
      emulators
        ? [
            `backend: emulators (Firestore ${config.FIRESTORE_EMULATOR_HOST}, Pub/Sub ${config.PUBSUB_EMULATOR_HOST}, project ${config.GOOGLE_CLOUD_PROJECT})`,
            `artifacts: gs://${config.TDA_ARTIFACTS_BUCKET}/... stored under ${dataDir}`,
          ]
        : [
            `backend: gcp (project ${config.GOOGLE_CLOUD_PROJECT})`,
            `artifacts: gs://${config.TDA_ARTIFACTS_BUCKET}/...`,
          ],
    close: async () => {
      await broker.close();
      await pubsub.close();
      await firestore.terminate();
    },
  };
}
