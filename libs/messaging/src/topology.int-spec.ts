import { PubSub } from '@google-cloud/pubsub';
import { emulatorEndpoints, uniqueName } from '@tda/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TopologyError } from './messaging.errors';
import { applyTopology, buildTopology, stepReadySubscription, type PlanItem } from './topology';

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
});
