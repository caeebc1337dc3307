import { PubSub } from '@google-cloud/pubsub';
import { emulatorEndpoints, expectEventually, uniqueName } from '@tda/test-support';
import { describe, expect, it } from 'vitest';
import type { MessageBroker, ReceivedMessage, SnapshotBroker } from './broker.port';
import { GooglePubSubBroker } from './google-pubsub-broker.adapter';
import { SubscriptionNotFoundError } from './messaging.errors';
import {
  conformanceChannel,
  conformanceTopology,
  describeMessageBrokerConformance,
} from './testing';
import { applyTopology } from './topology';

function emulatorClient(): PubSub {
  const { pubsubHost, projectId } = emulatorEndpoints();
  return new PubSub({ projectId, apiEndpoint: pubsubHost, emulatorMode: true });
}

/** The same broker with every subscription pulling on demand (delivery: 'on-demand'). */
function onDemand(broker: GooglePubSubBroker): MessageBroker & SnapshotBroker {
  return {
    createSnapshot: (name, snapshot) => broker.createSnapshot(name, snapshot),
    getSnapshot: (snapshot) => broker.getSnapshot(snapshot),
    seekToSnapshot: (name, snapshot) => broker.seekToSnapshot(name, snapshot),
    publish: (topic, message) => broker.publish(topic, message),
    subscribe: (name, onMessage, options) =>
      broker.subscribe(name, onMessage, { ...options, delivery: 'on-demand' }),
    seek: (name, time) => broker.seek(name, time),
    close: () => broker.close(),
  };
}

/** The conformance suite on the emulator, for each delivery mode of the adapter. */
for (const [mode, wrap] of [
  ['streaming pull', (b: GooglePubSubBroker): MessageBroker => b],
  ['on-demand pull', onDemand],
] as const) {
  describeMessageBrokerConformance(
    `GooglePubSubBroker, ${mode} (Pub/Sub emulator)`,
    async () => {
      const pubsub = emulatorClient();
      const broker = new GooglePubSubBroker({ pubsub, closeTimeoutMs: 2_000 });
      return {
        broker: wrap(broker),
        createChannel: async ({ ackDeadlineSeconds }) => {
          const prefix = uniqueName('conf');
          await applyTopology(pubsub, conformanceTopology(prefix, ackDeadlineSeconds));
          return conformanceChannel(prefix);
        },
        dispose: async () => {
          await broker.close();
          await pubsub.close();
        },
      };
    },
    // Pub/Sub's minimum ack deadline is 10 s; the redelivery comes after it, not before.
    { shortAckDeadlineSeconds: 10, deliveryTimeoutMs: 20_000, expiryLowerBoundMs: 8_000 },
  );
}

describe('GooglePubSubBroker specifics (emulator)', () => {
  it('on demand, a busy consumer is never handed a second message: the idle one gets it', async () => {
    const clients = [emulatorClient(), emulatorClient()];
    const brokers = clients.map((pubsub) => new GooglePubSubBroker({ pubsub }));
    const publisher = new GooglePubSubBroker({ pubsub: clients[0] as PubSub });
    const name = uniqueName('busy');
    const [topic] = await (clients[0] as PubSub).createTopic(name);
    await topic.createSubscription(`${name}-sub`, { ackDeadlineSeconds: 10 });
    const got: { consumer: number; at: number }[] = [];
    const held: ReceivedMessage[] = [];
    const handles = await Promise.all(
      brokers.map((broker, consumer) =>
        broker.subscribe(
          `${name}-sub`,
          (message) => {
            got.push({ consumer, at: Date.now() });
            held.push(message); // busy: settled only at the end
          },
          { maxInFlight: 1, delivery: 'on-demand' },
        ),
      ),
    );
    try {
      const started = Date.now();
      await Promise.all([1, 2].map((n) => publisher.publish(name, { data: { n } })));
      await expectEventually(() => expect(got).toHaveLength(2), { timeoutMs: 10_000 });
      expect(new Set(got.map((g) => g.consumer)).size).toBe(2);
      expect(Math.max(...got.map((g) => g.at)) - started).toBeLessThan(5_000);
    } finally {
      for (const message of held) message.ack();
      await Promise.all(handles.map((h) => h.close()));
      await Promise.all([...brokers, publisher].map((b) => b.close()));
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  it('counts redeliveries itself when the subscription has no dead-letter policy', async () => {
    const pubsub = emulatorClient();
    const broker = new GooglePubSubBroker({ pubsub });
    try {
      const name = uniqueName('nodlq');
      const [topic] = await pubsub.createTopic(name);
      // No dead-letter policy: Pub/Sub leaves message.deliveryAttempt at 0.
      await topic.createSubscription(`${name}-sub`, { ackDeadlineSeconds: 10 });
      const seen: ReceivedMessage[] = [];
      const handle = await broker.subscribe(
        `${name}-sub`,
        (m) => {
          seen.push(m);
          if (m.deliveryAttempt < 3) m.nack();
          else m.ack();
        },
        { maxInFlight: 1 },
      );
      const id = await broker.publish(name, { data: { n: 1 } });
      await expectEventually(() => expect(seen).toHaveLength(3), { timeoutMs: 20_000 });
      expect(seen.map((m) => [m.id, m.deliveryAttempt])).toEqual([
        [id, 1],
        [id, 2],
        [id, 3],
      ]);
      await handle.close();
    } finally {
      await broker.close();
      await pubsub.close();
    }
  });

  it('reports a missing subscription through onError', async () => {
    const pubsub = emulatorClient();
    const broker = new GooglePubSubBroker({ pubsub });
    try {
      const errors: Error[] = [];
      const handle = await broker.subscribe(uniqueName('missing'), () => undefined, {
        maxInFlight: 1,
        onError: (error) => errors.push(error),
      });
      await expectEventually(() => expect(errors.length).toBeGreaterThan(0), { timeoutMs: 20_000 });
      expect(errors[0]).toBeInstanceOf(SubscriptionNotFoundError);
      expect(errors[0]).toMatchObject({ code: 'NOT_FOUND' });
      await handle.close();
    } finally {
      await broker.close();
      await pubsub.close();
    }
  });
});
