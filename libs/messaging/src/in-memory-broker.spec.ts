import { uniqueName } from '@tda/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import type { ReceivedMessage } from './broker.port';
import { InMemoryBroker } from './in-memory-broker.adapter';
import { TopicNotFoundError } from './messaging.errors';
import {
  conformanceChannel,
  conformanceTopology,
  describeMessageBrokerConformance,
} from './testing';
import {
  buildTopology,
  deadLetterSubscription,
  stepReadySubscription,
  stepReadyTopic,
} from './topology';
import { expectEventually } from '@tda/test-support';

// 10 s of topology time = 100 ms here.
const TIME_SCALE = 0.01;

describeMessageBrokerConformance(
  'InMemoryBroker',
  async () => {
    const broker = new InMemoryBroker({ timeScale: TIME_SCALE });
    return {
      broker,
      createChannel: async ({ ackDeadlineSeconds }) => {
        const prefix = uniqueName('conf');
        broker.applyTopology(conformanceTopology(prefix, ackDeadlineSeconds));
        return conformanceChannel(prefix);
      },
      injectDuplicate: (subscription, messageId) => broker.injectDuplicate(subscription, messageId),
      dispose: () => broker.close(),
    };
  },
  { shortAckDeadlineSeconds: 10, deliveryTimeoutMs: 3_000, expiryLowerBoundMs: 90 },
);

describe('InMemoryBroker specifics', () => {
  let broker: InMemoryBroker;
  afterEach(async () => {
    await broker.close();
  });

  function collect(into: ReceivedMessage[], decide: (m: ReceivedMessage) => 'ack' | 'nack') {
    return (m: ReceivedMessage) => {
      into.push(m);
      if (decide(m) === 'ack') m.ack();
      else m.nack();
    };
  }

  it('fans a topic out to every subscription and round-robins competing consumers', async () => {
    broker = new InMemoryBroker();
    broker.createTopic('t');
    const base = {
      topic: 't',
      ackDeadlineMs: 1000,
      minBackoffMs: 0,
      maxBackoffMs: 0,
      retainAckedMessages: false,
    };
    broker.createSubscription('a', base);
    broker.createSubscription('b', base);
    const a1: ReceivedMessage[] = [];
    const a2: ReceivedMessage[] = [];
    const b: ReceivedMessage[] = [];
    await broker.subscribe(
      'a',
      collect(a1, () => 'ack'),
      { maxInFlight: 5 },
    );
    await broker.subscribe(
      'a',
      collect(a2, () => 'ack'),
      { maxInFlight: 5 },
    );
    await broker.subscribe(
      'b',
      collect(b, () => 'ack'),
      { maxInFlight: 5 },
    );
    for (let n = 0; n < 4; n++) await broker.publish('t', { data: { n } });
    await expectEventually(() => expect(a1.length + a2.length).toBe(4));
    await expectEventually(() => expect(b).toHaveLength(4));
    expect(a1.length).toBeGreaterThan(0);
    expect(a2.length).toBeGreaterThan(0);
    expect(broker.stats('a')).toMatchObject({ acked: 4, outstanding: 0, pending: 0 });
  });

  it('rejects publishing to an unknown topic', async () => {
    broker = new InMemoryBroker();
    await expect(broker.publish('missing', { data: {} })).rejects.toBeInstanceOf(
      TopicNotFoundError,
    );
  });

  it('backs off exponentially between min and max after nacks', async () => {
    broker = new InMemoryBroker();
    broker.createTopic('t');
    broker.createSubscription('s', {
      topic: 't',
      ackDeadlineMs: 5000,
      minBackoffMs: 40,
      maxBackoffMs: 100,
      retainAckedMessages: false,
    });
    const seen: ReceivedMessage[] = [];
    const times: number[] = [];
    await broker.subscribe(
      's',
      (m) => {
        seen.push(m);
        times.push(Date.now());
        if (m.deliveryAttempt < 4) m.nack();
        else m.ack();
      },
      { maxInFlight: 1 },
    );
    await broker.publish('t', { data: {} });
    await expectEventually(() => expect(seen).toHaveLength(4), { timeoutMs: 3000 });
    const gaps = times.slice(1).map((t, i) => t - (times[i] ?? 0));
    // 40, 80, then capped at 100 (timers may fire a little late, never early)
    expect(gaps[0]).toBeGreaterThanOrEqual(38);
    expect(gaps[1]).toBeGreaterThanOrEqual(78);
    expect(gaps[2]).toBeGreaterThanOrEqual(98);
    expect(gaps[2]).toBeLessThan(400);
  });

  it('extends leases while the consumer allows it, then redelivers', async () => {
    broker = new InMemoryBroker();
    broker.createTopic('t');
    broker.createSubscription('s', {
      topic: 't',
      ackDeadlineMs: 30,
      minBackoffMs: 0,
      maxBackoffMs: 0,
      retainAckedMessages: false,
    });
    const seen: ReceivedMessage[] = [];
    await broker.subscribe('s', (m) => seen.push(m), {
      maxInFlight: 1,
      maxLeaseExtensionSeconds: 0.2,
    });
    const startedAt = Date.now();
    await broker.publish('t', { data: {} });
    await expectEventually(() => expect(seen).toHaveLength(2), { timeoutMs: 3000 });
    // held for ~200 ms of extensions, far more than one 30 ms deadline
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(180);
    seen[1]?.ack();
  });

  it('dead-letters after maxDeliveryAttempts, like GCP', async () => {
    broker = new InMemoryBroker({ timeScale: 0.001 });
    const prefix = uniqueName('dl');
    broker.applyTopology(
      buildTopology({
        prefix,
        stepTypes: ['CHART_EXPORT'],
        maxDeliveryAttempts: 5,
        subscriptionDefaults: { minimumBackoffSeconds: 1, maximumBackoffSeconds: 1 },
      }),
    );
    const seen: ReceivedMessage[] = [];
    const dead: ReceivedMessage[] = [];
    await broker.subscribe(
      stepReadySubscription('CHART_EXPORT', prefix),
      collect(seen, () => 'nack'),
      {
        maxInFlight: 1,
      },
    );
    await broker.subscribe(
      deadLetterSubscription(prefix),
      collect(dead, () => 'ack'),
      {
        maxInFlight: 1,
      },
    );
    await broker.publish(stepReadyTopic('CHART_EXPORT', prefix), {
      data: { n: 1 },
      attributes: { runId: 'r' },
    });
    await expectEventually(() => expect(dead).toHaveLength(1), { timeoutMs: 3000 });
    expect(seen.map((m) => m.deliveryAttempt)).toEqual([1, 2, 3, 4, 5]);
    expect(dead[0]?.attributes).toMatchObject({
      runId: 'r',
      CloudPubSubDeadLetterSourceDeliveryCount: '5',
    });
    expect(broker.stats(stepReadySubscription('CHART_EXPORT', prefix)).deadLettered).toBe(1);
  });

  it('injects duplicates at the configured rate', async () => {
    broker = new InMemoryBroker({ duplicateRate: 1 });
    broker.createTopic('t');
    broker.createSubscription('s', {
      topic: 't',
      ackDeadlineMs: 1000,
      minBackoffMs: 0,
      maxBackoffMs: 0,
      retainAckedMessages: false,
    });
    const seen: ReceivedMessage[] = [];
    await broker.subscribe(
      's',
      collect(seen, () => 'ack'),
      { maxInFlight: 5 },
    );
    const id = await broker.publish('t', { data: {} });
    await expectEventually(() => expect(seen).toHaveLength(2));
    expect(seen.map((m) => m.id)).toEqual([id, id]);
    // only the first delivery spawns a duplicate: no endless chain
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(seen).toHaveLength(2);
  });

  it('ignores settling twice and acks of stale deliveries', async () => {
    broker = new InMemoryBroker();
    broker.createTopic('t');
    broker.createSubscription('s', {
      topic: 't',
      ackDeadlineMs: 20,
      minBackoffMs: 0,
      maxBackoffMs: 0,
      retainAckedMessages: false,
    });
    const seen: ReceivedMessage[] = [];
    const observed: unknown[] = [];
    await broker.subscribe(
      's',
      (m) => {
        seen.push(m);
        if (m.deliveryAttempt !== 2) return; // the first delivery is left to expire
        // The first lease expired: its ack is ignored and this delivery is still outstanding.
        seen[0]?.ack();
        observed.push(broker.stats('s'));
        m.ack();
        m.nack(); // ignored: already settled
        observed.push(broker.stats('s'));
      },
      { maxInFlight: 1, maxLeaseExtensionSeconds: 0 },
    );
    await broker.publish('t', { data: {} });
    await expectEventually(() => expect(observed).toHaveLength(2));
    expect(observed[0]).toMatchObject({ acked: 0, outstanding: 1 });
    expect(observed[1]).toMatchObject({ acked: 1, outstanding: 0, pending: 0 });
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(seen).toHaveLength(2);
  });
});
