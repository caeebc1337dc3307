import { buildTopology } from '@tda/messaging';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  SERVICE_DEPLOYMENTS,
  serviceAccountEmail,
  type DeployEnvironment,
} from '../../deployment-model';
import type { InfraPlanItem } from '../../plan';
import { FakeGcpApi } from '../../testing/fake-gcp-api';
import {
  installIdentityRoutes,
  type IdentityFakeControl,
} from '../../testing/fake-identity-routes';
import { GcpApiError } from '../gcp-rest.client';
import { applyIdentityResources } from './apply-identity';
import { applyArtifactsBucket } from './artifacts-bucket';
import { applyImageRepository } from './image-repository';
import { getProjectNumber, pubsubServiceAgentEmail } from './project-number';
import { applySecretContainers } from './secret-containers';
import { applyServiceAccounts } from './service-accounts';
import { serviceAccountMember } from './iam-bindings';
import { applyServiceIamBindings } from './service-iam-bindings';
import { llmWorkerMembers, testEnvironment } from '../../testing';

const env = testEnvironment('prod');
const apply = { dryRun: false };
const dryRun = { dryRun: true };

/** Non-GET calls except Resource Manager's getIamPolicy, a read that the API only offers as POST. */
function writes(fake: FakeGcpApi, since: number): { method: string; url: string }[] {
  return fake.mutationsSince(since).filter((c) => !c.url.endsWith(':getIamPolicy'));
}

/** The Pub/Sub resources the platform reconciler creates (outside this module). */
function seedPubSub(fake: FakeGcpApi): void {
  const { topics, subscriptions } = buildTopology({ prefix: env.pubsubPrefix });
  for (const { name } of topics) {
    fake.resources.set(`projects/${env.project}/topics/${name}`, { name });
  }
  for (const { name } of subscriptions) {
    fake.resources.set(`projects/${env.project}/subscriptions/${name}`, { name });
  }
}

/** The IAM member of each service of the model whose roles include `role` on the project. */
function projectRoleMembers(role: string): string[] {
  return SERVICE_DEPLOYMENTS.filter((s) =>
    s.roles(env).some((r) => r.resource.type === 'project' && r.role === role),
  ).map((s) => serviceAccountMember(serviceAccountEmail(s.name, env.project)));
}

async function applyAll(fake: FakeGcpApi, options: { dryRun: boolean }): Promise<InfraPlanItem[]> {
  return [
    ...(await applyIdentityResources(fake, env, options)),
    ...(await applyServiceIamBindings(fake, env, options)),
  ];
}

function actions(plan: readonly InfraPlanItem[]): Set<string> {
  return new Set(plan.map((i) => i.action));
}

describe('identity and storage reconcilers', () => {
  let fake: FakeGcpApi;
  let control: IdentityFakeControl;

  beforeEach(() => {
    fake = new FakeGcpApi();
    control = installIdentityRoutes(fake, { projectNumber: '123456789012' });
  });

  it('plans a create for every resource of an empty project', async () => {
    const plan = await applyIdentityResources(fake, env, dryRun);
    expect(plan.map((i) => `${i.action} ${i.kind} ${i.name}`)).toEqual([
      // one account per deployment of the model, each once (however many step types)
      ...SERVICE_DEPLOYMENTS.map(
        (s) => `create service-account ${s.name}@acme-tda-prod.iam.gserviceaccount.com`,
      ),
      'create service-account tda-pubsub-push@acme-tda-prod.iam.gserviceaccount.com',
      'create service-account tda-scheduler@acme-tda-prod.iam.gserviceaccount.com',
      'create bucket acme-tda-prod-tda-artifacts',
      'create secret tda-api-token',
      'create secret tda-gemini-api-key',
      'create artifact-registry-repository europe-west1-docker.pkg.dev/acme-tda-prod/tda',
    ]);
    expect(plan.find((i) => i.name === 'tda-api-token')?.note).toContain(
      'gcloud secrets versions add tda-api-token --project=acme-tda-prod',
    );
  });

  it('makes no mutating call in a dry run, bindings included', async () => {
    seedPubSub(fake);
    const plan = await applyAll(fake, dryRun);
    expect(writes(fake, 0)).toEqual([]);
    // Nothing but the seeded topics and subscription (and the fake's lazily materialised policies).
    const created = [...fake.resources.keys()].filter(
      (k) => !/\/(topics|subscriptions)\//.test(k) && !k.endsWith('#iam'),
    );
    expect(created).toEqual([]);
    // The dry run reads the policies of what exists and cannot read what apply would create.
    const bindings = plan.filter((i) => i.kind === 'iam-binding');
    expect(
      bindings.filter((i) => i.name.startsWith('topic ')).every((i) => i.action === 'create'),
    ).toBe(true);
    const bucketBindings = bindings.filter((i) => i.name.startsWith('bucket '));
    expect(bucketBindings.length).toBeGreaterThan(0);
    expect(
      bucketBindings.every((i) => i.action === 'skip' && i.note?.includes('does not exist yet')),
    ).toBe(true);
  });

  it('creates everything, then a second apply is all unchanged and only reads', async () => {
    seedPubSub(fake);
    const first = await applyAll(fake, apply);
    expect(actions(first)).toEqual(new Set(['create']));

    const bucket = fake.resources.get(`projects/_/buckets/${env.artifactsBucket}`);
    expect(bucket).toMatchObject({
      location: 'EUROPE-WEST1',
      iamConfiguration: {
        uniformBucketLevelAccess: { enabled: true },
        publicAccessPrevention: 'enforced',
      },
    });
    expect(
      fake.resources.get(`projects/${env.project}/locations/${env.region}/repositories/tda`),
    ).toMatchObject({
      format: 'DOCKER',
    });
    const datastoreUsers = projectRoleMembers('roles/datastore.user');
    expect(datastoreUsers).toContain(
      'serviceAccount:tda-orchestrator@acme-tda-prod.iam.gserviceaccount.com',
    );
    expect(control.policy(`projects/${env.project}`)?.bindings).toContainEqual({
      role: 'roles/datastore.user',
      members: datastoreUsers,
    });
    // No secret value was written by the apply.
    const secret = fake.resources.get(`projects/${env.project}/secrets/tda-api-token`);
    expect(secret).toMatchObject({ versions: [], replication: { automatic: {} } });

    const mark = fake.calls.length;
    const second = await applyAll(fake, apply);
    expect(second.map((i) => i.name)).toEqual(first.map((i) => i.name));
    expect(actions(second)).toEqual(new Set(['unchanged']));
    expect(writes(fake, mark)).toEqual([]);
  });

  it('with llm=vertex-ai: no Gemini key secret, roles/aiplatform.user instead of its accessor', async () => {
    const vertex: DeployEnvironment = { ...env, llm: 'vertex-ai' };
    seedPubSub(fake);
    const first = [
      ...(await applyIdentityResources(fake, vertex, apply)),
      ...(await applyServiceIamBindings(fake, vertex, apply)),
    ];
    expect(first.filter((i) => i.kind === 'secret').map((i) => i.name)).toEqual(['tda-api-token']);
    expect(fake.resources.has(`projects/${env.project}/secrets/tda-gemini-api-key`)).toBe(false);
    // one project binding listing every LLM worker, each once
    expect(control.policy(`projects/${env.project}`)?.bindings).toContainEqual({
      role: 'roles/aiplatform.user',
      members: llmWorkerMembers(env.project),
    });
    const accessorGrants = first.filter(
      (i) => i.kind === 'iam-binding' && i.name.includes('roles/secretmanager.secretAccessor'),
    );
    expect(accessorGrants.map((i) => i.name)).toEqual([
      'secret tda-api-token: roles/secretmanager.secretAccessor → serviceAccount:tda-orchestrator@acme-tda-prod.iam.gserviceaccount.com',
    ]);

    const mark = fake.calls.length;
    const second = [
      ...(await applyIdentityResources(fake, vertex, apply)),
      ...(await applyServiceIamBindings(fake, vertex, apply)),
    ];
    expect(actions(second)).toEqual(new Set(['unchanged']));
    expect(writes(fake, mark)).toEqual([]);
  });

  it('notes a secret without an enabled version until one is added', async () => {
    await applySecretContainers(fake, env, apply);
    control.addSecretVersion(env.project, 'tda-api-token');
    control.addSecretVersion(env.project, 'tda-gemini-api-key', 'DISABLED');
    const plan = await applySecretContainers(fake, env, apply);
    expect(plan.map((i) => [i.name, i.action, i.note === undefined])).toEqual([
      ['tda-api-token', 'unchanged', true],
      ['tda-gemini-api-key', 'unchanged', false],
    ]);
  });

  it('patches a drifted service account text, and reports a disabled account without enabling it', async () => {
    await applyServiceAccounts(fake, env, apply);
    const key = `projects/${env.project}/serviceAccounts/tda-scheduler@acme-tda-prod.iam.gserviceaccount.com`;
    const account = fake.resources.get(key) as Record<string, unknown>;
    fake.resources.set(key, { ...account, displayName: 'edited', disabled: true });

    const mark = fake.calls.length;
    const plan = await applyServiceAccounts(fake, env, apply);
    const item = plan.find((i) => i.name.startsWith('tda-scheduler@'));
    expect(item).toMatchObject({
      action: 'update',
      changes: [{ field: 'displayName', from: 'edited', to: 'TDA Cloud Scheduler invoker' }],
    });
    expect(item?.note).toContain('gcloud iam service-accounts enable');
    expect(writes(fake, mark)).toEqual([
      { method: 'PATCH', url: expect.stringContaining('tda-scheduler@') as unknown },
    ]);
    expect(fake.resources.get(key)).toMatchObject({
      displayName: 'TDA Cloud Scheduler invoker',
      disabled: true,
    });
  });

  it('patches bucket access settings back and leaves an unchangeable location as skip', async () => {
    await applyArtifactsBucket(fake, env, apply);
    const key = `projects/_/buckets/${env.artifactsBucket}`;
    const bucket = fake.resources.get(key) as Record<string, unknown>;
    fake.resources.set(key, {
      ...bucket,
      iamConfiguration: {
        uniformBucketLevelAccess: { enabled: false },
        publicAccessPrevention: 'inherited',
      },
    });
    const [drifted] = await applyArtifactsBucket(fake, env, apply);
    expect(drifted).toMatchObject({
      action: 'update',
      changes: [
        { field: 'uniformBucketLevelAccess', from: false, to: true },
        { field: 'publicAccessPrevention', from: 'inherited', to: 'enforced' },
      ],
    });
    expect((await applyArtifactsBucket(fake, env, apply))[0]?.action).toBe('unchanged');

    const [moved] = await applyArtifactsBucket(fake, { ...env, region: 'us-central1' }, apply);
    expect(moved).toMatchObject({
      action: 'skip',
      changes: [{ field: 'location', from: 'EUROPE-WEST1' }],
    });
  });

  it('reports a non-docker repository of the same name as skip', async () => {
    fake.resources.set(`projects/${env.project}/locations/${env.region}/repositories/tda`, {
      format: 'NPM',
    });
    const [item] = await applyImageRepository(fake, env, apply);
    expect(item).toMatchObject({
      action: 'skip',
      changes: [{ field: 'format', from: 'NPM', to: 'DOCKER' }],
    });
  });

  it('treats a repository whose creation is still running (409 on create) as existing', async () => {
    const fresh = new FakeGcpApi();
    fresh.on('GET', 'artifactregistry', /repositories\/tda$/, () => ({ status: 404, data: {} }));
    fresh.on('POST', 'artifactregistry', /repositories$/, () => ({
      status: 409,
      data: {
        error: { code: 409, status: 'ALREADY_EXISTS', message: 'the repository already exists' },
      },
    }));
    const [item] = await applyImageRepository(fresh, env, apply);
    expect(item).toMatchObject({ action: 'unchanged' });
  });

  it('surfaces a permission failure as GcpApiError naming the missing role', async () => {
    const denied = new FakeGcpApi();
    // Registered first: wins over the installed create route.
    denied.on('POST', 'iam', /\/serviceAccounts$/, () => ({
      status: 403,
      data: {
        error: {
          code: 403,
          status: 'PERMISSION_DENIED',
          message: "Permission 'iam.serviceAccounts.create' denied on resource",
        },
      },
    }));
    installIdentityRoutes(denied, { projectNumber: '1' });
    const error = await applyServiceAccounts(denied, env, apply).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(GcpApiError);
    expect(error).toMatchObject({ status: 403, code: 'UNAUTHENTICATED' });
    const message = (error as GcpApiError).message;
    expect(message).toContain(
      'POST https://iam.googleapis.com/v1/projects/acme-tda-prod/serviceAccounts',
    );
    expect(message).toContain('iam.serviceAccounts.create');
    expect(message).toContain('needs roles/iam.serviceAccountAdmin');
  });

  it('explains a bucket name owned by another project', async () => {
    const taken = new FakeGcpApi();
    taken.on('GET', 'storage', /^\/storage\/v1\/b\/[^/]+$/, () => ({
      status: 403,
      data: { error: { code: 403, message: 'does not have storage.buckets.get access' } },
    }));
    await expect(applyArtifactsBucket(taken, env, apply)).rejects.toThrow(
      /set artifactsBucket in deploy\/environments.json/,
    );
  });

  it('looks up the project number for the Pub/Sub service agent', async () => {
    const number = await getProjectNumber(fake, env.project);
    expect(number).toBe('123456789012');
    expect(pubsubServiceAgentEmail(number)).toBe(
      'service-123456789012@gcp-sa-pubsub.iam.gserviceaccount.com',
    );

    const missing = new FakeGcpApi();
    missing.on('GET', 'cloudresourcemanager', /.*/, () => ({ status: 404, data: {} }));
    await expect(getProjectNumber(missing, 'nope-project')).rejects.toThrow(
      /project nope-project was not found/,
    );
  });
});
