import { beforeEach, describe, expect, it } from 'vitest';
import { FakeGcpApi } from '../../testing/fake-gcp-api';
import {
  installIdentityRoutes,
  type IdentityFakeControl,
} from '../../testing/fake-identity-routes';
import { GcpApiError } from '../gcp-rest.client';
import {
  applyIamBindings,
  policyGrants,
  policyWithGrants,
  serviceAccountMember,
  type IamBinding,
} from './iam-bindings';
import { pubsubServiceAgentEmail } from './project-number';
import { applyServiceAccounts } from './service-accounts';
import { testEnvironment } from '../../testing';

const env = testEnvironment('dev');
const apply = { dryRun: false };
const orchestrator = serviceAccountMember('tda-orchestrator@acme-tda-dev.iam.gserviceaccount.com');
const push = serviceAccountMember('tda-pubsub-push@acme-tda-dev.iam.gserviceaccount.com');
const foreign = 'user:alice@example.com';

function binding(
  resource: IamBinding['resource'],
  role: string,
  member = orchestrator,
): IamBinding {
  return { resource, role, member, reason: 'test' };
}

describe('policyWithGrants', () => {
  it('adds members to the unconditional binding of the role and keeps everything else', () => {
    const policy = {
      version: 3,
      etag: 'BwX1',
      auditConfigs: [{ service: 'allServices' }],
      bindings: [
        { role: 'roles/pubsub.publisher', members: [foreign] },
        {
          role: 'roles/pubsub.publisher',
          members: ['group:ops@example.com'],
          condition: {
            title: 'office hours',
            expression: 'request.time < timestamp("2030-01-01T00:00:00Z")',
          },
        },
      ],
    };
    const next = policyWithGrants(policy, [
      { role: 'roles/pubsub.publisher', member: orchestrator },
      { role: 'roles/pubsub.subscriber', member: orchestrator },
      { role: 'roles/pubsub.subscriber', member: orchestrator },
    ]);
    expect(next).toEqual({
      version: 3,
      etag: 'BwX1',
      auditConfigs: [{ service: 'allServices' }],
      bindings: [
        { role: 'roles/pubsub.publisher', members: [foreign, orchestrator] },
        policy.bindings[1],
        { role: 'roles/pubsub.subscriber', members: [orchestrator] },
      ],
    });
    // The input is not modified (a retry recomputes from a fresh read).
    expect(policy.bindings[0]?.members).toEqual([foreign]);
  });

  it('writes a policy with conditions as version 3 and matches members case-insensitively', () => {
    const conditional = {
      bindings: [{ role: 'roles/x', members: [foreign], condition: { expression: 'true' } }],
    };
    expect(policyWithGrants(conditional, []).version).toBe(3);
    expect(policyWithGrants({ bindings: [] }, []).version).toBe(1);
    expect(
      policyGrants(
        {
          bindings: [{ role: 'roles/x', members: ['serviceAccount:A@p.iam.gserviceaccount.com'] }],
        },
        'roles/x',
        'serviceAccount:a@p.iam.gserviceaccount.com',
      ),
    ).toBe(true);
    // A conditional grant is not the unconditional grant TDA needs.
    expect(policyGrants(conditional, 'roles/x', foreign)).toBe(false);
  });
});

describe('applyIamBindings', () => {
  let fake: FakeGcpApi;
  let control: IdentityFakeControl;
  const topic = 'tda-step-events';
  const topicName = `projects/${env.project}/topics/${topic}`;

  beforeEach(async () => {
    fake = new FakeGcpApi();
    control = installIdentityRoutes(fake, { projectNumber: '42' });
    await applyServiceAccounts(fake, env, apply);
    fake.resources.set(topicName, { name: topicName });
  });

  it('grants on every resource kind through its own policy API, one plan item per binding', async () => {
    fake.resources.set(`projects/${env.project}/subscriptions/s1`, {});
    fake.resources.set(
      `projects/${env.project}/locations/${env.region}/services/tda-worker-ohlcv-export`,
      {},
    );
    fake.resources.set(`projects/_/buckets/${env.artifactsBucket}`, { projectNumber: '42' });
    fake.resources.set(`projects/${env.project}/secrets/tda-api-token`, { versions: [] });
    const agent = serviceAccountMember(pubsubServiceAgentEmail('42'));
    const bindings = [
      binding({ type: 'project' }, 'roles/datastore.user'),
      binding({ type: 'topic', name: topic }, 'roles/pubsub.publisher'),
      binding({ type: 'subscription', name: 's1' }, 'roles/pubsub.subscriber', agent),
      binding({ type: 'bucket', name: env.artifactsBucket }, 'roles/storage.objectViewer'),
      binding({ type: 'secret', name: 'tda-api-token' }, 'roles/secretmanager.secretAccessor'),
      binding({ type: 'run-service', name: 'tda-worker-ohlcv-export' }, 'roles/run.invoker', push),
      binding({ type: 'topic', name: topic }, 'roles/pubsub.publisher'), // duplicate
    ];
    const mark = fake.calls.length;
    const plan = await applyIamBindings(fake, env, bindings, apply);
    expect(plan.map((i) => [i.action, i.kind, i.name])).toEqual([
      ['create', 'iam-binding', `project acme-tda-dev: roles/datastore.user → ${orchestrator}`],
      ['create', 'iam-binding', `topic ${topic}: roles/pubsub.publisher → ${orchestrator}`],
      ['create', 'iam-binding', `subscription s1: roles/pubsub.subscriber → ${agent}`],
      [
        'create',
        'iam-binding',
        `bucket ${env.artifactsBucket}: roles/storage.objectViewer → ${orchestrator}`,
      ],
      [
        'create',
        'iam-binding',
        `secret tda-api-token: roles/secretmanager.secretAccessor → ${orchestrator}`,
      ],
      [
        'create',
        'iam-binding',
        `Cloud Run service tda-worker-ohlcv-export: roles/run.invoker → ${push}`,
      ],
    ]);
    expect(fake.calls.slice(mark).map((c) => `${c.method} ${c.url}`)).toEqual([
      'POST https://cloudresourcemanager.googleapis.com/v1/projects/acme-tda-dev:getIamPolicy',
      'POST https://cloudresourcemanager.googleapis.com/v1/projects/acme-tda-dev:setIamPolicy',
      `GET https://pubsub.googleapis.com/v1/${topicName}:getIamPolicy`,
      `POST https://pubsub.googleapis.com/v1/${topicName}:setIamPolicy`,
      'GET https://pubsub.googleapis.com/v1/projects/acme-tda-dev/subscriptions/s1:getIamPolicy',
      'POST https://pubsub.googleapis.com/v1/projects/acme-tda-dev/subscriptions/s1:setIamPolicy',
      `GET https://storage.googleapis.com/storage/v1/b/${env.artifactsBucket}/iam`,
      `PUT https://storage.googleapis.com/storage/v1/b/${env.artifactsBucket}/iam`,
      'GET https://secretmanager.googleapis.com/v1/projects/acme-tda-dev/secrets/tda-api-token:getIamPolicy',
      'POST https://secretmanager.googleapis.com/v1/projects/acme-tda-dev/secrets/tda-api-token:setIamPolicy',
      'GET https://run.googleapis.com/v2/projects/acme-tda-dev/locations/europe-west1/services/tda-worker-ohlcv-export:getIamPolicy',
      'POST https://run.googleapis.com/v2/projects/acme-tda-dev/locations/europe-west1/services/tda-worker-ohlcv-export:setIamPolicy',
    ]);
    // Storage's default legacy bindings survive next to the new one.
    expect(control.policy(`projects/_/buckets/${env.artifactsBucket}`)?.bindings).toEqual([
      { role: 'roles/storage.legacyBucketOwner', members: ['projectEditor:42', 'projectOwner:42'] },
      { role: 'roles/storage.legacyBucketReader', members: ['projectViewer:42'] },
      { role: 'roles/storage.objectViewer', members: [orchestrator] },
    ]);

    const again = await applyIamBindings(fake, env, bindings, apply);
    expect(new Set(again.map((i) => i.action))).toEqual(new Set(['unchanged']));
  });

  it('grants on a service account through that account’s own policy, never the project’s', async () => {
    const agent = serviceAccountMember(pubsubServiceAgentEmail('42'));
    const pushEmail = 'tda-pubsub-push@acme-tda-dev.iam.gserviceaccount.com';
    const accountName = `projects/${env.project}/serviceAccounts/${pushEmail}`;
    const grant = binding(
      { type: 'service-account', email: pushEmail },
      'roles/iam.serviceAccountTokenCreator',
      agent,
    );
    const mark = fake.calls.length;
    const plan = await applyIamBindings(fake, env, [grant], apply);
    expect(plan.map((i) => [i.action, i.kind, i.name])).toEqual([
      [
        'create',
        'iam-binding',
        `service account ${pushEmail}: roles/iam.serviceAccountTokenCreator → ${agent}`,
      ],
    ]);
    expect(fake.calls.slice(mark).map((c) => `${c.method} ${c.url}`)).toEqual([
      `POST https://iam.googleapis.com/v1/${accountName}:getIamPolicy`,
      `POST https://iam.googleapis.com/v1/${accountName}:setIamPolicy`,
    ]);
    expect(control.policy(accountName)?.bindings).toEqual([
      { role: 'roles/iam.serviceAccountTokenCreator', members: [agent] },
    ]);
    // the project policy was neither read nor written
    expect(control.policy(`projects/${env.project}`)).toBeUndefined();
    // another account of the project got nothing
    expect(
      control.policy(
        `projects/${env.project}/serviceAccounts/tda-orchestrator@acme-tda-dev.iam.gserviceaccount.com`,
      ),
    ).toBeUndefined();

    const mark2 = fake.calls.length;
    const again = await applyIamBindings(fake, env, [grant], apply);
    expect(again.map((i) => i.action)).toEqual(['unchanged']);
    expect(fake.mutationsSince(mark2)).toEqual([]);
    expect(fake.calls.slice(mark2).map((c) => c.url)).toEqual([
      `https://iam.googleapis.com/v1/${accountName}:getIamPolicy`,
    ]);
  });

  it('skips a grant on a service account that does not exist (yet)', async () => {
    const email = 'tda-nobody@acme-tda-dev.iam.gserviceaccount.com';
    const mark = fake.calls.length;
    const plan = await applyIamBindings(
      fake,
      env,
      [binding({ type: 'service-account', email }, 'roles/iam.serviceAccountTokenCreator')],
      apply,
    );
    expect(plan).toEqual([
      expect.objectContaining({
        action: 'skip',
        note: expect.stringContaining(`service account ${email} does not exist yet`) as unknown,
      }),
    ]);
    expect(fake.mutationsSince(mark)).toEqual([]);
  });

  it('never removes a member someone else granted', async () => {
    await fake.request({
      method: 'GET',
      url: `https://pubsub.googleapis.com/v1/${topicName}:getIamPolicy`,
    });
    const etag = control.policy(topicName)?.etag;
    await fake.request({
      method: 'POST',
      url: `https://pubsub.googleapis.com/v1/${topicName}:setIamPolicy`,
      body: {
        policy: {
          etag,
          bindings: [
            { role: 'roles/pubsub.publisher', members: [foreign] },
            { role: 'roles/pubsub.viewer', members: [foreign] },
          ],
        },
      },
    });
    await applyIamBindings(
      fake,
      env,
      [binding({ type: 'topic', name: topic }, 'roles/pubsub.publisher')],
      apply,
    );
    expect(control.policy(topicName)?.bindings).toEqual([
      { role: 'roles/pubsub.publisher', members: [foreign, orchestrator] },
      { role: 'roles/pubsub.viewer', members: [foreign] },
    ]);
  });

  it('retries the read-modify-write once on an etag conflict, keeping the concurrent change', async () => {
    control.interleaveBeforeNextSet(topicName, (policy) => {
      policy.bindings = [
        ...(policy.bindings ?? []),
        { role: 'roles/pubsub.viewer', members: [foreign] },
      ];
    });
    const mark = fake.calls.length;
    const plan = await applyIamBindings(
      fake,
      env,
      [binding({ type: 'topic', name: topic }, 'roles/pubsub.publisher')],
      apply,
    );
    expect(plan[0]?.action).toBe('create');
    expect(fake.calls.slice(mark).map((c) => c.method)).toEqual(['GET', 'POST', 'GET', 'POST']);
    expect(control.policy(topicName)?.bindings).toEqual([
      { role: 'roles/pubsub.viewer', members: [foreign] },
      { role: 'roles/pubsub.publisher', members: [orchestrator] },
    ]);
  });

  it('retries a Storage precondition failure (412) the same way', async () => {
    fake.resources.set(`projects/_/buckets/${env.artifactsBucket}`, { projectNumber: '42' });
    const bucketName = `projects/_/buckets/${env.artifactsBucket}`;
    await fake.request({
      method: 'GET',
      url: `https://storage.googleapis.com/storage/v1/b/${env.artifactsBucket}/iam`,
    });
    control.interleaveBeforeNextSet(bucketName, (policy) => {
      policy.bindings = [
        ...(policy.bindings ?? []),
        { role: 'roles/storage.objectViewer', members: [foreign] },
      ];
    });
    await applyIamBindings(
      fake,
      env,
      [binding({ type: 'bucket', name: env.artifactsBucket }, 'roles/storage.objectViewer')],
      apply,
    );
    expect(control.policy(bucketName)?.bindings?.at(-1)).toEqual({
      role: 'roles/storage.objectViewer',
      members: [foreign, orchestrator],
    });
  });

  it('gives up after the one conflict retry', async () => {
    const conflicting = new FakeGcpApi();
    conflicting.on('GET', 'pubsub', /:getIamPolicy$/, () => ({ status: 200, data: { etag: 'a' } }));
    conflicting.on('POST', 'pubsub', /:setIamPolicy$/, () => ({
      status: 409,
      data: {
        error: { code: 409, status: 'ABORTED', message: 'There were concurrent policy changes.' },
      },
    }));
    await expect(
      applyIamBindings(
        conflicting,
        env,
        [binding({ type: 'topic', name: topic }, 'roles/pubsub.publisher')],
        apply,
      ),
    ).rejects.toBeInstanceOf(GcpApiError);
    expect(conflicting.calls.map((c) => c.method)).toEqual(['GET', 'POST', 'GET', 'POST']);
  });

  it('skips bindings on a resource that does not exist yet', async () => {
    const plan = await applyIamBindings(
      fake,
      env,
      [binding({ type: 'run-service', name: 'tda-orchestrator' }, 'roles/run.invoker', push)],
      apply,
    );
    expect(plan).toEqual([
      expect.objectContaining({
        action: 'skip',
        note: expect.stringContaining(
          'Cloud Run service tda-orchestrator does not exist yet',
        ) as unknown,
      }),
    ]);
  });

  it('reads but does not write in a dry run', async () => {
    const mark = fake.calls.length;
    const plan = await applyIamBindings(
      fake,
      env,
      [binding({ type: 'topic', name: topic }, 'roles/pubsub.publisher')],
      { dryRun: true },
    );
    expect(plan[0]?.action).toBe('create');
    expect(fake.mutationsSince(mark)).toEqual([]);
  });

  it('waits for a just-created service account to become grantable', async () => {
    const lagging = new FakeGcpApi();
    installIdentityRoutes(lagging, { projectNumber: '42', iamPropagationLag: 2 });
    await applyServiceAccounts(lagging, env, apply);
    lagging.resources.set(topicName, {});
    const slept: number[] = [];
    const plan = await applyIamBindings(
      lagging,
      env,
      [binding({ type: 'topic', name: topic }, 'roles/pubsub.publisher')],
      apply,
      {
        propagationDelaysMs: [10, 20, 30],
        sleep: (ms) => {
          slept.push(ms);
          return Promise.resolve();
        },
      },
    );
    expect(slept).toEqual([10, 20]);
    expect(plan[0]?.action).toBe('create');
  });

  it('fails with the API message once the propagation waits are used up', async () => {
    const plan = applyIamBindings(
      fake,
      env,
      [
        binding(
          { type: 'topic', name: topic },
          'roles/pubsub.publisher',
          serviceAccountMember('tda-nobody@acme-tda-dev.iam.gserviceaccount.com'),
        ),
      ],
      apply,
      { propagationDelaysMs: [1], sleep: () => Promise.resolve() },
    );
    await expect(plan).rejects.toThrow(
      /Service account tda-nobody@acme-tda-dev.iam.gserviceaccount.com does not exist/,
    );
  });
});
