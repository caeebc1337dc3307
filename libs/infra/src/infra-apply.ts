import type { PubSub } from '@google-cloud/pubsub';
import { buildTopology } from '@tda/messaging';
import type { DeployEnvironment } from './deployment-model';
import type { GcpRestClient } from './gcp/gcp-rest.client';
import { applyIdentityResources } from './gcp/identity/apply-identity';
import { applyIamBindings, type IamApplyTuning } from './gcp/identity/iam-bindings';
import { getProjectNumber } from './gcp/identity/project-number';
import { applyServiceIamBindings } from './gcp/identity/service-iam-bindings';
import { applySchedulerJobs } from './gcp/platform/cloud-scheduler';
import { lookupRunServiceUrls } from './gcp/platform/cloud-run-services';
import type { FirestoreAssets } from './gcp/platform/firestore-assets';
import {
  applyFirestoreDatabase,
  type OperationWaitTuning,
} from './gcp/platform/firestore-database';
import { applyFirestoreIndexes } from './gcp/platform/firestore-indexes';
import { applyFirestoreRules } from './gcp/platform/firestore-rules';
import {
  applyPubSubTopology,
  gcpTopology,
  pubsubServiceAgentBindings,
  runInvokerBindings,
  runServicesToLookUp,
} from './gcp/platform/pubsub-platform';
import { InfraError } from './infra.errors';
import type { ApplyOptions, InfraPlanItem } from './plan';

/**
 * The parts of `tda infra apply`, in the order they run. Each one needs only what the ones before
 * it made: service accounts before the grants naming them, Pub/Sub resources before their IAM,
 * the Cloud Run URLs (read first) before push configs, invoker grants and Scheduler jobs.
 */
export const INFRA_SECTIONS = [
  { id: 'identity', title: 'service accounts, artifacts bucket, secrets, image repository' },
  { id: 'cloud-run-lookup', title: 'Cloud Run service URLs (read only)' },
  { id: 'pubsub', title: 'Pub/Sub topics and subscriptions (push configs)' },
  { id: 'iam', title: 'IAM: service roles and the Pub/Sub service agent' },
  { id: 'firestore', title: 'Firestore database, composite indexes, security rules' },
  { id: 'run-invokers', title: 'Cloud Run invokers (Pub/Sub push, Cloud Scheduler)' },
  { id: 'scheduler', title: 'Cloud Scheduler jobs' },
] as const;
export type InfraSectionId = (typeof INFRA_SECTIONS)[number]['id'];

export const EMULATOR_SKIP_NOTE = 'not available on the emulator';

export interface ApplyInfraOptions extends ApplyOptions {
  environment: DeployEnvironment;
  /** For the Pub/Sub topology: the emulator's or the project's (ADC). */
  pubsub: PubSub;
  /** Every other Google API (ADC, or a fake over HTTP in tests). Unused with `emulator`. */
  client: GcpRestClient;
  /**
   * Pub/Sub is the emulator: only the topology is applied — the same one the services apply at
   * boot locally (no push: local workers pull) — and every other part is one `skip` item.
   */
  emulator: boolean;
  /** deploy/firestore/ (loadFirestoreAssets); required unless `emulator`. */
  firestore?: FirestoreAssets;
  tuning?: { iam?: IamApplyTuning; operations?: OperationWaitTuning };
}

/**
 * `tda infra apply`: makes the project match the deployment model and returns one plan item per
 * resource (create / update / unchanged / skip). Never deletes anything. With `dryRun` it only
 * reads: the plan is what an apply would do (items that depend on resources a dry run does not
 * create, such as grants on a topic that does not exist yet, are `skip`). Applying twice gives
 * only `unchanged` (and `skip` for what waits on `skaffold run`).
 */
export async function applyInfra(options: ApplyInfraOptions): Promise<InfraPlanItem[]> {
  const { environment, pubsub, client, dryRun } = options;
  const apply: ApplyOptions = { dryRun };
  if (options.emulator) {
    const topology = buildTopology({ prefix: environment.pubsubPrefix });
    return [
      ...(await applyPubSubTopology(pubsub, topology, apply)),
      ...INFRA_SECTIONS.filter((s) => s.id !== 'pubsub').map((s): InfraPlanItem => ({
        action: 'skip',
        kind: 'section',
        name: s.title,
        changes: [],
        note: EMULATOR_SKIP_NOTE,
      })),
    ];
  }
  const firestore = options.firestore;
  if (firestore === undefined) {
    throw new InfraError('applyInfra needs the deploy/firestore assets outside the emulator');
  }
  const iamTuning = options.tuning?.iam;
  const items: InfraPlanItem[] = [];

  // identity: accounts, bucket, secrets, repository
  items.push(...(await applyIdentityResources(client, environment, apply)));

  // cloud-run-lookup: which Services skaffold has deployed (and their URLs)
  const urls = await lookupRunServiceUrls(client, environment, runServicesToLookUp());

  // pubsub
  const { topology, skipped: pushSkipped } = gcpTopology(environment, urls);
  items.push(...(await applyPubSubTopology(pubsub, topology, apply)));
  items.push(...pushSkipped);

  // iam: the services' own roles (topics and subscriptions exist now), the Pub/Sub service agent
  items.push(...(await applyServiceIamBindings(client, environment, apply, iamTuning)));
  const projectNumber = await getProjectNumber(client, environment.project);
  items.push(
    ...(await applyIamBindings(
      client,
      environment,
      pubsubServiceAgentBindings(topology, projectNumber, environment),
      apply,
      iamTuning,
    )),
  );

  // firestore
  const database = await applyFirestoreDatabase(
    client,
    environment,
    apply,
    options.tuning?.operations,
  );
  items.push(database.item);
  items.push(
    ...(await applyFirestoreIndexes(client, environment, firestore.indexes.indexes, {
      dryRun,
      databaseExists: database.exists,
    })),
  );
  items.push(await applyFirestoreRules(client, environment, firestore.rules, apply));

  // run-invokers
  const invokers = runInvokerBindings(environment, urls);
  items.push(...(await applyIamBindings(client, environment, invokers.bindings, apply, iamTuning)));
  items.push(...invokers.skipped);

  // scheduler
  items.push(...(await applySchedulerJobs(client, environment, urls, apply)));
  return items;
}
