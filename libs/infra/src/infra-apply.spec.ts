import type { PubSub } from '@google-cloud/pubsub';
import { buildTopology, stepReadySubscription } from '@tda/messaging';
import { STEP_TYPE_DESCRIPTORS } from '@tda/step-types';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { loadFirestoreAssets } from './gcp/platform/firestore-assets';
import { applyInfra, EMULATOR_SKIP_NOTE, INFRA_SECTIONS } from './infra-apply';
import type { InfraPlanItem } from './plan';
import { FakeGcpApi } from './testing/fake-gcp-api';
import { installIdentityRoutes, type IdentityFakeControl } from './testing/fake-identity-routes';
import { installPlatformRoutes, type PlatformFakeControl } from './testing/fake-platform-routes';
import { testEnvironment } from './testing';

/** The step types deployed as push Services, from their descriptors (no hand-kept list). */
const PUSH = STEP_TYPE_DESCRIPTORS.filter((d) => d.deploy.kind === 'Service');

const env = testEnvironment('dev');
const firestore = loadFirestoreAssets(join(__dirname, '../../../deploy/firestore'));

type Metadata = Record<string, unknown>;

/**
 * The Pub/Sub admin calls applyTopology makes, in memory (the emulator covers the real client in
 * the integration tests). Created topics and subscriptions are also registered in the
 * FakeGcpApi, whose IAM routes need them to exist, as on GCP.
 */
class FakePubSub {
  readonly projectId: string;
  readonly topics = new Set<string>();
  readonly subscriptions = new Map<string, Metadata>();
  mutations = 0;

  constructor(
    private readonly fake: FakeGcpApi,
    project: string,
  ) {
    this.projectId = project;
  }

  getClientConfig(): Promise<void> {
    return Promise.resolve();
  }

  createTopic(name: string): Promise<void> {
    this.mutations++;
    this.topics.add(name);
    this.fake.resources.set(`projects/${this.projectId}/topics/${name}`, { name });
    return Promise.resolve();
  }

  topic(name: string) {
    return {
      exists: () => Promise.resolve([this.topics.has(name)]),
      createSubscription: (sub: string, resource: Metadata) => {
        this.mutations++;
        this.subscriptions.set(sub, {
          ...resource,
          topic: `projects/${this.projectId}/topics/${name}`,
        });
        this.fake.resources.set(`projects/${this.projectId}/subscriptions/${sub}`, { name: sub });
        return Promise.resolve();
      },
    };
  }

  subscription(name: string) {
    return {
      getMetadata: () => {
        const metadata = this.subscriptions.get(name);
        return metadata === undefined
          ? Promise.reject(Object.assign(new Error('not found'), { code: 5 }))
          : Promise.resolve([structuredClone(metadata)]);
      },
      setMetadata: (update: Metadata) => {
        this.mutations++;
        this.subscriptions.set(name, { ...this.subscriptions.get(name), ...update });
        return Promise.resolve();
      },
    };
  }
}

function byAction(plan: readonly InfraPlanItem[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of plan) counts[item.action] = (counts[item.action] ?? 0) + 1;
  return counts;
}

describe('applyInfra (every section against FakeGcpApi)', () => {
  let fake: FakeGcpApi;
  let identity: IdentityFakeControl;
  let platform: PlatformFakeControl;
  let pubsub: FakePubSub;
  const run = (dryRun: boolean) =>
    applyInfra({
      environment: env,
      pubsub: pubsub as unknown as PubSub,
      client: fake,
      dryRun,
      emulator: false,
      firestore,
      tuning: {
        iam: { sleep: () => Promise.resolve() },
        operations: { sleep: () => Promise.resolve(), pollMs: 0 },
      },
    });

  beforeEach(() => {
    fake = new FakeGcpApi();
    identity = installIdentityRoutes(fake, { projectNumber: '123456789012' });
    platform = installPlatformRoutes(fake);
    pubsub = new FakePubSub(fake, env.project);
  });

  it('dry run on an empty project: a plan of creates and skips, nothing written', async () => {
    const plan = await run(true);
    expect(fake.mutationsSince(0)).toEqual([]);
    expect(pubsub.mutations).toBe(0);
    expect(new Set(plan.map((i) => i.action))).toEqual(new Set(['create', 'skip']));
    const kinds = new Set(plan.map((i) => i.kind));
    for (const kind of [
      'service-account',
      'bucket',
      'secret',
      'topic',
      'subscription',
      'firestore-database',
      'firestore-index',
      'firestore-rules',
    ]) {
      expect(kinds).toContain(kind);
    }
    // grants on topics a dry run does not create wait for the apply
    expect(
      plan.filter((i) => i.kind === 'iam-binding' && i.action === 'create').length,
    ).toBeGreaterThan(0);
    expect(
      plan.filter((i) => i.kind === 'scheduler-job').map((i) => `${i.action} ${i.name}`),
    ).toEqual(['skip tda-reconcile', 'skip tda-schedules-tick']);
  });

  it('apply creates; applying again changes nothing; services deployed later get push, invokers and the jobs', async () => {
    const first = await run(false);
    expect(byAction(first)['create']).toBeGreaterThan(20);
    const topology = buildTopology({ prefix: env.pubsubPrefix });
    expect([...pubsub.topics].sort()).toEqual(topology.topics.map((t) => t.name).sort());
    // the Pub/Sub service agent may mint tokens for the push identity only, not project-wide
    const agent = 'serviceAccount:service-123456789012@gcp-sa-pubsub.iam.gserviceaccount.com';
    expect(
      identity.policy(
        `projects/${env.project}/serviceAccounts/tda-pubsub-push@${env.project}.iam.gserviceaccount.com`,
      )?.bindings,
    ).toEqual([{ role: 'roles/iam.serviceAccountTokenCreator', members: [agent] }]);
    expect(
      identity
        .policy(`projects/${env.project}`)
        ?.bindings?.some((b) => b.role === 'roles/iam.serviceAccountTokenCreator'),
    ).toBe(false);

    const mark = fake.calls.length;
    const mutations = pubsub.mutations;
    const second = await run(false);
    expect(second.filter((i) => i.action !== 'unchanged' && i.action !== 'skip')).toEqual([]);
    expect(fake.mutationsSince(mark)).toEqual([]);
    expect(pubsub.mutations).toBe(mutations);
    // what waits for skaffold run
    expect(
      second
        .filter((i) => i.action === 'skip')
        .map((i) => `${i.kind} ${i.name.split(':')[0] ?? ''}`),
    ).toEqual([
      ...PUSH.map((d) => `push-config ${stepReadySubscription(d.stepType)}`),
      ...PUSH.map((d) => `iam-binding Cloud Run service tda-${d.service}`),
      'iam-binding Cloud Run service tda-orchestrator',
      'scheduler-job tda-reconcile',
      'scheduler-job tda-schedules-tick',
    ]);

    // skaffold run
    const urls = [...PUSH.map((d) => `tda-${d.service}`), 'tda-orchestrator'].map((name) =>
      platform.deployRunService(env.project, env.region, name),
    );
    const third = await run(false);
    const changed = third.filter((i) => i.action !== 'unchanged');
    expect(changed.map((i) => `${i.action} ${i.kind} ${i.name}`)).toEqual([
      ...PUSH.map((d) => `update subscription ${stepReadySubscription(d.stepType)}`),
      ...PUSH.map(
        (d) =>
          `create iam-binding Cloud Run service tda-${d.service}: roles/run.invoker → serviceAccount:tda-pubsub-push@${env.project}.iam.gserviceaccount.com`,
      ),
      `create iam-binding Cloud Run service tda-orchestrator: roles/run.invoker → serviceAccount:tda-scheduler@${env.project}.iam.gserviceaccount.com`,
      'create scheduler-job tda-reconcile',
      'create scheduler-job tda-schedules-tick',
    ]);
    expect(changed[0]?.changes).toEqual([
      { field: 'pushEndpoint', from: null, to: `${urls[0] ?? ''}/pubsub/push` },
      {
        field: 'pushOidcServiceAccountEmail',
        from: null,
        to: `tda-pubsub-push@${env.project}.iam.gserviceaccount.com`,
      },
      { field: 'pushOidcAudience', from: null, to: 'tda-worker-ohlcv-export' },
    ]);

    const mark2 = fake.calls.length;
    const fourth = await run(false);
    expect(fourth.every((i) => i.action === 'unchanged')).toBe(true);
    expect(fake.mutationsSince(mark2)).toEqual([]);
  });

  it('converges drift made in the console', async () => {
    await run(false);
    platform.deployRunService(env.project, env.region, 'tda-orchestrator');
    await run(false);
    platform.patchResource(`projects/${env.project}/locations/${env.region}/jobs/tda-reconcile`, {
      schedule: '0 * * * *',
    });
    const drifted = await run(true);
    expect(drifted.filter((i) => i.action === 'update').map((i) => i.name)).toEqual([
      'tda-reconcile',
    ]);
    expect((await run(false)).filter((i) => i.action === 'update')).toHaveLength(1);
    expect((await run(false)).filter((i) => i.action === 'update')).toHaveLength(0);
  });

  it('emulator: only the Pub/Sub topology, every other section skipped without a Google API call', async () => {
    const plan = await applyInfra({
      environment: env,
      pubsub: pubsub as unknown as PubSub,
      client: fake,
      dryRun: false,
      emulator: true,
    });
    const topology = buildTopology({ prefix: env.pubsubPrefix });
    expect(plan.filter((i) => i.kind === 'topic' || i.kind === 'subscription')).toHaveLength(
      topology.topics.length + topology.subscriptions.length,
    );
    expect(plan.filter((i) => i.action === 'skip')).toEqual(
      INFRA_SECTIONS.filter((s) => s.id !== 'pubsub').map((s) => ({
        action: 'skip',
        kind: 'section',
        name: s.title,
        changes: [],
        note: EMULATOR_SKIP_NOTE,
      })),
    );
    expect(fake.calls).toEqual([]);
    // no push on the emulator: local workers pull
    expect(
      [...pubsub.subscriptions.values()].every(
        (m) => (m['pushConfig'] as Metadata | undefined)?.['pushEndpoint'] === undefined,
      ),
    ).toBe(true);
  });

  it('refuses to run outside the emulator without the Firestore assets', async () => {
    await expect(
      applyInfra({
        environment: env,
        pubsub: pubsub as unknown as PubSub,
        client: fake,
        dryRun: true,
        emulator: false,
      }),
    ).rejects.toThrow(/deploy\/firestore/);
  });
});
