import { PubSub } from '@google-cloud/pubsub';
import { emulatorEndpoints, uniqueName } from '@tda/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TopologyError } from './messaging.errors';
import {
  applyTopology,
  buildTopology,
  stepReadySubscription,
  type PlanItem,
  type PushDelivery,
} from './topology';

const actions = (plan: PlanItem[]) => plan.map((p) => `${p.action} ${p.kind} ${p.name}`);

describe('applyTopology on the Pub/Sub emulator', () => {
  let pubsub: PubSub;
  beforeAll(() => {
    const { pubsubHost, projectId } = emulatorEndpoints();
    pubsub = new PubSub({ projectId, apiEndpoint: pubsubHost, emulatorMode: true });
  });
  afterAll(async () => {
    await pubsub.close();
  });

  it('dry run changes nothing; apply creates everything; applying again is all unchanged', async () => {
    const prefix = uniqueName('topo');
    const topology = buildTopology({ prefix, stepTypes: ['LLM_REPORT', 'CHART_EXPORT'] });

    const dry = await applyTopology(pubsub, topology, { dryRun: true });
    expect(dry.every((p) => p.action === 'create')).toBe(true);
    expect(dry).toHaveLength(topology.topics.length + topology.subscriptions.length);
    const [topicExists] = await pubsub.topic(`${prefix}-step-events`).exists();
    expect(topicExists).toBe(false);

    const first = await applyTopology(pubsub, topology);
    expect(actions(first)).toEqual(actions(dry));

    const second = await applyTopology(pubsub, topology);
    expect(second.every((p) => p.action === 'unchanged')).toBe(true);
    expect(second).toHaveLength(first.length);

    const [metadata] = await pubsub
      .subscription(stepReadySubscription('LLM_REPORT', prefix))
      .getMetadata();
    expect(metadata).toMatchObject({
      topic: `projects/${emulatorEndpoints().projectId}/topics/${prefix}-step-ready-llm-report`,
      ackDeadlineSeconds: 60,
      retainAckedMessages: true,
      deadLetterPolicy: {
        deadLetterTopic: `projects/${emulatorEndpoints().projectId}/topics/${prefix}-dead-letter`,
        maxDeliveryAttempts: 10,
      },
    });
    expect(Number(metadata.messageRetentionDuration?.seconds)).toBe(604800);
    expect(Number(metadata.retryPolicy?.minimumBackoff?.seconds)).toBe(10);
  });

  it('updates drifted subscription settings in place (dry run first), then converges', async () => {
    const prefix = uniqueName('drift');
    await applyTopology(pubsub, buildTopology({ prefix, stepTypes: ['LLM_REPORT'] }));
    const changed = buildTopology({
      prefix,
      stepTypes: ['LLM_REPORT'],
      maxDeliveryAttempts: 6,
      subscriptionDefaults: { ackDeadlineSeconds: 30, maximumBackoffSeconds: 120 },
    });
    const name = stepReadySubscription('LLM_REPORT', prefix);

    const dry = await applyTopology(pubsub, changed, { dryRun: true });
    const dryItem = dry.find((p) => p.name === name);
    expect(dryItem?.action).toBe('update');
    expect(dryItem?.changes).toEqual(
      expect.arrayContaining([
        { field: 'ackDeadlineSeconds', from: 60, to: 30 },
        { field: 'maximumBackoffSeconds', from: 600, to: 120 },
        { field: 'maxDeliveryAttempts', from: 10, to: 6 },
      ]),
    );
    const [untouched] = await pubsub.subscription(name).getMetadata();
    expect(untouched.ackDeadlineSeconds).toBe(60);

    const applied = await applyTopology(pubsub, changed);
    expect(applied.find((p) => p.name === name)?.action).toBe('update');
    const [updated] = await pubsub.subscription(name).getMetadata();
    expect(updated.ackDeadlineSeconds).toBe(30);
    expect(updated.deadLetterPolicy?.maxDeliveryAttempts).toBe(6);
    expect(Number(updated.retryPolicy?.maximumBackoff?.seconds)).toBe(120);

    const again = await applyTopology(pubsub, changed);
    expect(again.every((p) => p.action === 'unchanged')).toBe(true);
  });

  it('refuses a subscription attached to another topic', async () => {
    const prefix = uniqueName('clash');
    const topology = buildTopology({ prefix, stepTypes: ['LLM_REPORT'] });
    const [other] = await pubsub.createTopic(`${prefix}-other`);
    await other.createSubscription(stepReadySubscription('LLM_REPORT', prefix));
    await expect(applyTopology(pubsub, topology)).rejects.toBeInstanceOf(TopologyError);
  });

  it('creates push subscriptions with an OIDC token, converges endpoint changes, keeps and removes push', async () => {
    const prefix = uniqueName('push');
    const name = stepReadySubscription('OHLCV_EXPORT', prefix);
    const push = {
      endpoint: 'http://127.0.0.1:9/pubsub/push',
      audience: 'tda-worker-ohlcv-export',
      serviceAccountEmail: 'tda-pubsub-push@test-project.iam.gserviceaccount.com',
    };
    const withPush = (p: PushDelivery | undefined) =>
      buildTopology({
        prefix,
        stepTypes: ['OHLCV_EXPORT'],
        ...(p === undefined ? {} : { push: { OHLCV_EXPORT: p } }),
        stepSubscriptionSettings: { OHLCV_EXPORT: { ackDeadlineSeconds: 330 } },
      });
    const pushConfig = async () => (await pubsub.subscription(name).getMetadata())[0];

    const created = await applyTopology(pubsub, withPush(push));
    expect(created.find((p) => p.name === name)?.action).toBe('create');
    expect(await pushConfig()).toMatchObject({
      ackDeadlineSeconds: 330,
      pushConfig: {
        pushEndpoint: push.endpoint,
        oidcToken: { serviceAccountEmail: push.serviceAccountEmail, audience: push.audience },
      },
    });
    expect(
      (await applyTopology(pubsub, withPush(push))).every((p) => p.action === 'unchanged'),
    ).toBe(true);

    // 'keep' (target not deployed) never touches an existing push config
    expect(
      (await applyTopology(pubsub, withPush('keep'))).every((p) => p.action === 'unchanged'),
    ).toBe(true);

    const moved = { ...push, endpoint: 'http://127.0.0.1:9/v2/pubsub/push', audience: 'other' };
    const dry = await applyTopology(pubsub, withPush(moved), { dryRun: true });
    expect(dry.find((p) => p.name === name)).toEqual({
      action: 'update',
      kind: 'subscription',
      name,
      changes: [
        { field: 'pushEndpoint', from: push.endpoint, to: moved.endpoint },
        { field: 'pushOidcAudience', from: push.audience, to: 'other' },
      ],
    });
    expect((await pushConfig()).pushConfig?.pushEndpoint).toBe(push.endpoint);
    await applyTopology(pubsub, withPush(moved));
    expect((await pushConfig()).pushConfig).toMatchObject({
      pushEndpoint: moved.endpoint,
      oidcToken: { audience: 'other' },
    });
    expect(
      (await applyTopology(pubsub, withPush(moved))).every((p) => p.action === 'unchanged'),
    ).toBe(true);

    // no push for the step type: back to pull
    const pull = await applyTopology(pubsub, withPush(undefined));
    expect(pull.find((p) => p.name === name)?.changes).toEqual(
      expect.arrayContaining([{ field: 'pushEndpoint', from: moved.endpoint, to: null }]),
    );
    expect((await pushConfig()).pushConfig?.pushEndpoint ?? '').toBe('');
    expect(
      (await applyTopology(pubsub, withPush(undefined))).every((p) => p.action === 'unchanged'),
    ).toBe(true);
  });

  it("creates a 'keep' subscription as pull", async () => {
    const prefix = uniqueName('keep');
    const topology = buildTopology({
      prefix,
      stepTypes: ['CHART_EXPORT'],
      push: { CHART_EXPORT: 'keep' },
    });
    await applyTopology(pubsub, topology);
    const [metadata] = await pubsub
      .subscription(stepReadySubscription('CHART_EXPORT', prefix))
      .getMetadata();
    expect(metadata.pushConfig?.pushEndpoint ?? '').toBe('');
    expect((await applyTopology(pubsub, topology)).every((p) => p.action === 'unchanged')).toBe(
      true,
    );
  });
});
