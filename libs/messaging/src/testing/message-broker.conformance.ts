import { expectEventually } from '@tda/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  supportsSnapshots,
  type MessageBroker,
  type ReceivedMessage,
  type SubscriptionHandle,
} from '../broker.port';
import {
  InvalidSnapshotNameError,
  SnapshotAlreadyExistsError,
  SnapshotNotFoundError,
  SubscriptionNotFoundError,
} from '../messaging.errors';
import { buildTopology, stepReadySubscription, stepReadyTopic, type Topology } from '../topology';

export interface BrokerTestChannel {
  topic: string;
  subscription: string;
}

export interface MessageBrokerHarness {
  broker: MessageBroker;
  /**
   * A fresh topic + subscription with names no other test uses, created by applying
   * conformanceTopology(prefix, ackDeadlineSeconds) to the backend.
   */
  createChannel(options: { ackDeadlineSeconds: number }): Promise<BrokerTestChannel>;
  /** Backend-specific hook to force a duplicate delivery of one message (in-memory only). */
  injectDuplicate?(subscription: string, messageId: string): void;
  dispose(): Promise<void>;
}

export interface MessageBrokerConformanceOptions {
  /** Ack deadline for the expiry case; Pub/Sub's minimum is 10 s. */
  shortAckDeadlineSeconds: number;
  /** Upper bound for waiting on one expected delivery. */
  deliveryTimeoutMs: number;
  /** The expiry redelivery must not come sooner than this after the first delivery. */
  expiryLowerBoundMs: number;
}

/** The topology every conformance channel is created from: one step type, short backoff. */
export function conformanceTopology(prefix: string, ackDeadlineSeconds: number): Topology {
  return buildTopology({
    prefix,
    stepTypes: ['LLM_REPORT'],
    subscriptionDefaults: {
      ackDeadlineSeconds,
      minimumBackoffSeconds: 1,
      maximumBackoffSeconds: 2,
      messageRetentionSeconds: 3600,
    },
  });
}

export function conformanceChannel(prefix: string): BrokerTestChannel {
  return {
    topic: stepReadyTopic('LLM_REPORT', prefix),
    subscription: stepReadySubscription('LLM_REPORT', prefix),
  };
}

/** Collects deliveries for assertions; settles each with `decide`. */
class Recorder {
  readonly deliveries: ReceivedMessage[] = [];
  readonly receivedAt: number[] = [];
  unsettled = 0;
  maxUnsettled = 0;

  constructor(
    private readonly decide: (m: ReceivedMessage, recorder: Recorder) => 'ack' | 'nack' | 'hold',
  ) {}

  readonly listener = (message: ReceivedMessage): void => {
    this.deliveries.push(message);
    this.receivedAt.push(Date.now());
    const decision = this.decide(message, this);
    if (decision === 'hold') {
      this.unsettled++;
      this.maxUnsettled = Math.max(this.maxUnsettled, this.unsettled);
      return;
    }
    if (decision === 'ack') message.ack();
    else message.nack();
  };

  settle(message: ReceivedMessage, how: 'ack' | 'nack'): void {
    this.unsettled--;
    if (how === 'ack') message.ack();
    else message.nack();
  }

  bodies(): unknown[] {
    return this.deliveries.map((d) => JSON.parse(d.data.toString('utf8')));
  }
}

/**
 * The MessageBroker contract, run against every adapter (DESIGN.md §8): the in-memory broker
 * in the unit project and Google Pub/Sub on the emulator in the integration project. Same
 * cases, same expectations; backend differences are confined to the harness.
 */
export function describeMessageBrokerConformance(
  name: string,
  createHarness: () => Promise<MessageBrokerHarness>,
  options: MessageBrokerConformanceOptions,
): void {
  const { shortAckDeadlineSeconds, deliveryTimeoutMs, expiryLowerBoundMs } = options;
  const eventually = <T>(check: () => T | Promise<T>) =>
    expectEventually(check, { timeoutMs: deliveryTimeoutMs, intervalMs: 20 });

  describe(`MessageBroker conformance: ${name}`, () => {
    let harness: MessageBrokerHarness;
    const handles: SubscriptionHandle[] = [];

    beforeEach(async () => {
      harness = await createHarness();
    });

    afterEach(async () => {
      await Promise.all(handles.splice(0).map((h) => h.close()));
      await harness.dispose();
    });

    async function subscribe(
      subscription: string,
      recorder: Recorder,
      extra: { maxInFlight?: number; ackDeadlineSeconds?: number; noLeaseExtension?: boolean } = {},
    ): Promise<SubscriptionHandle> {
      const handle = await harness.broker.subscribe(subscription, recorder.listener, {
        maxInFlight: extra.maxInFlight ?? 10,
        ...(extra.ackDeadlineSeconds === undefined
          ? {}
          : { ackDeadlineSeconds: extra.ackDeadlineSeconds }),
        ...(extra.noLeaseExtension === true ? { maxLeaseExtensionSeconds: 0 } : {}),
      });
      handles.push(handle);
      return handle;
    }

    it('delivers a published message with its data, attributes and deliveryAttempt 1', async () => {
      const { topic, subscription } = await harness.createChannel({ ackDeadlineSeconds: 30 });
      const recorder = new Recorder(() => 'ack');
      await subscribe(subscription, recorder);
      const before = Date.now();
      const id = await harness.broker.publish(topic, {
        data: { runId: 'r1', n: 1 },
        attributes: { messageType: 'step_ready', runId: 'r1' },
      });
      await eventually(() => expect(recorder.deliveries).toHaveLength(1));
      const [message] = recorder.deliveries;
      expect(message?.id).toBe(id);
      expect(JSON.parse(message?.data.toString('utf8') ?? '')).toEqual({ runId: 'r1', n: 1 });
      expect(message?.attributes).toMatchObject({ messageType: 'step_ready', runId: 'r1' });
      expect(message?.deliveryAttempt).toBe(1);
      // publishTime is the server's clock: allow some skew, but it must be a real time.
      expect(Math.abs((message?.publishTime.getTime() ?? 0) - before)).toBeLessThan(60_000);
    });

    it('sends a Buffer payload unchanged', async () => {
      const { topic, subscription } = await harness.createChannel({ ackDeadlineSeconds: 30 });
      const recorder = new Recorder(() => 'ack');
      await subscribe(subscription, recorder);
      const bytes = Buffer.from([0, 1, 2, 250, 255]);
      await harness.broker.publish(topic, { data: bytes });
      await eventually(() => expect(recorder.deliveries).toHaveLength(1));
      expect(recorder.deliveries[0]?.data.equals(bytes)).toBe(true);
    });

    it('redelivers after nack with an increasing deliveryAttempt', async () => {
      const { topic, subscription } = await harness.createChannel({ ackDeadlineSeconds: 30 });
      const recorder = new Recorder((m) => (m.deliveryAttempt < 3 ? 'nack' : 'ack'));
      await subscribe(subscription, recorder);
      const id = await harness.broker.publish(topic, { data: { n: 1 } });
      await eventually(() => expect(recorder.deliveries).toHaveLength(3));
      expect(recorder.deliveries.map((d) => d.id)).toEqual([id, id, id]);
      expect(recorder.deliveries.map((d) => d.deliveryAttempt)).toEqual([1, 2, 3]);
      // acked on the third attempt: no fourth delivery
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(recorder.deliveries).toHaveLength(3);
    });

    it(
      'redelivers when the ack deadline expires without ack or nack',
      async () => {
        const { topic, subscription } = await harness.createChannel({
          ackDeadlineSeconds: shortAckDeadlineSeconds,
        });
        // First delivery is held (never settled); the second is acked.
        const recorder = new Recorder((m) => (m.deliveryAttempt === 1 ? 'hold' : 'ack'));
        await subscribe(subscription, recorder, {
          ackDeadlineSeconds: shortAckDeadlineSeconds,
          noLeaseExtension: true,
        });
        const id = await harness.broker.publish(topic, { data: { n: 1 } });
        await eventually(() => expect(recorder.deliveries).toHaveLength(2));
        expect(recorder.deliveries.map((d) => [d.id, d.deliveryAttempt])).toEqual([
          [id, 1],
          [id, 2],
        ]);
        // not before the deadline: the lease was honoured, not merely dropped
        const [firstAt = 0, secondAt = 0] = recorder.receivedAt;
        expect(secondAt - firstAt).toBeGreaterThanOrEqual(expiryLowerBoundMs);
        const held = recorder.deliveries[0];
        if (held !== undefined) held.ack(); // stale: must be harmless
      },
      deliveryTimeoutMs * 2,
    );

    it('tolerates duplicates: the same payload published twice is seen twice', async () => {
      const { topic, subscription } = await harness.createChannel({ ackDeadlineSeconds: 30 });
      const recorder = new Recorder(() => 'ack');
      await subscribe(subscription, recorder);
      const payload = { runId: 'r1', stepId: 'LLM_REPORT:1d', attempt: 0 };
      const first = await harness.broker.publish(topic, { data: payload });
      const second = await harness.broker.publish(topic, { data: payload });
      await eventually(() => expect(recorder.deliveries).toHaveLength(2));
      expect(new Set(recorder.deliveries.map((d) => d.id))).toEqual(new Set([first, second]));
      expect(recorder.bodies()).toEqual([payload, payload]);
    });

    it('delivers a duplicate of one message id again when the backend can force one', async (context) => {
      if (harness.injectDuplicate === undefined) {
        context.skip();
        return;
      }
      const { topic, subscription } = await harness.createChannel({ ackDeadlineSeconds: 30 });
      const recorder = new Recorder(() => 'ack');
      await subscribe(subscription, recorder);
      const id = await harness.broker.publish(topic, { data: { n: 1 } });
      await eventually(() => expect(recorder.deliveries).toHaveLength(1));
      harness.injectDuplicate(subscription, id);
      await eventually(() => expect(recorder.deliveries).toHaveLength(2));
      expect(recorder.deliveries.map((d) => d.id)).toEqual([id, id]);
    });

    it('never has more than maxInFlight unsettled deliveries per subscriber', async () => {
      const { topic, subscription } = await harness.createChannel({ ackDeadlineSeconds: 30 });
      const recorder = new Recorder(() => 'hold');
      await subscribe(subscription, recorder, { maxInFlight: 2 });
      for (let n = 0; n < 5; n++) await harness.broker.publish(topic, { data: { n } });
      await eventually(() => expect(recorder.deliveries).toHaveLength(2));
      // Give the backend a chance to over-deliver before checking that it did not.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(recorder.deliveries).toHaveLength(2);
      // Settling frees capacity one for one until all five were seen.
      const settled = new Set<string>();
      await eventually(() => {
        for (const d of recorder.deliveries) {
          if (!settled.has(d.id)) {
            settled.add(d.id);
            recorder.settle(d, 'ack');
          }
        }
        expect(settled.size).toBe(5);
      });
      expect(recorder.maxUnsettled).toBeLessThanOrEqual(2);
    });

    it('after close, a subscriber gets nothing more and what it held is redelivered to others', async () => {
      const { topic, subscription } = await harness.createChannel({ ackDeadlineSeconds: 30 });
      const first = new Recorder(() => 'hold');
      const handle = await subscribe(subscription, first, { maxInFlight: 1 });
      const held = await harness.broker.publish(topic, { data: { n: 0 } });
      await eventually(() => expect(first.deliveries).toHaveLength(1));
      await handle.close();
      const later = await harness.broker.publish(topic, { data: { n: 1 } });
      const second = new Recorder(() => 'ack');
      await subscribe(subscription, second);
      await eventually(() =>
        expect(new Set(second.deliveries.map((d) => d.id))).toEqual(new Set([held, later])),
      );
      expect(first.deliveries.map((d) => d.id)).toEqual([held]);
    });

    it('seek to a time replays acknowledged messages (retainAckedMessages)', async () => {
      const { topic, subscription } = await harness.createChannel({ ackDeadlineSeconds: 30 });
      const recorder = new Recorder(() => 'ack');
      await subscribe(subscription, recorder);
      const id = await harness.broker.publish(topic, { data: { n: 1 } });
      await eventually(() => expect(recorder.deliveries).toHaveLength(1));
      // Let the ack reach the backend before rewinding.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const publishTime = recorder.deliveries[0]?.publishTime.getTime() ?? Date.now();
      await harness.broker.seek(subscription, new Date(publishTime - 1_000));
      await eventually(() => expect(recorder.deliveries).toHaveLength(2));
      expect(recorder.deliveries[1]?.id).toBe(id);
      // seeking to after the message marks it acked again: nothing more arrives
      await harness.broker.seek(subscription, new Date(publishTime + 60_000));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(recorder.deliveries).toHaveLength(2);
    });

    it('seek to a snapshot replays what was unacked at its creation and what came later', async () => {
      const { broker } = harness;
      if (!supportsSnapshots(broker)) throw new Error(`${name} must support snapshots`);
      const { topic, subscription } = await harness.createChannel({ ackDeadlineSeconds: 30 });
      const first = new Recorder(() => 'ack');
      const firstHandle = await subscribe(subscription, first);
      const acked = await broker.publish(topic, { data: { n: 'acked' } });
      await eventually(() => expect(first.deliveries).toHaveLength(1));
      await new Promise((resolve) => setTimeout(resolve, 500));
      await firstHandle.close();
      const ackedAt = first.deliveries[0]?.publishTime.getTime() ?? 0;
      // Published with nobody listening: the backlog when the snapshot is taken.
      const backlog = await broker.publish(topic, { data: { n: 'backlog' } });
      await new Promise((resolve) => setTimeout(resolve, 300));

      const snapshot = `snap-${subscription}`;
      const info = await broker.createSnapshot(subscription, snapshot);
      expect(info).toMatchObject({ name: snapshot, topic });
      // expireTime - 7 days: the oldest unacked message's publish time (after the acked one).
      const replaysFrom = (info.expireTime?.getTime() ?? 0) - 7 * 24 * 3_600_000;
      expect(replaysFrom).toBeGreaterThanOrEqual(ackedAt);
      expect(replaysFrom).toBeLessThanOrEqual(Date.now());
      expect(await broker.getSnapshot(snapshot)).toMatchObject({ name: snapshot, topic });
      expect(await broker.getSnapshot(`${snapshot}-missing`)).toBeNull();
      await expect(broker.createSnapshot(subscription, snapshot)).rejects.toBeInstanceOf(
        SnapshotAlreadyExistsError,
      );
      await expect(broker.createSnapshot(subscription, 'x')).rejects.toBeInstanceOf(
        InvalidSnapshotNameError,
      );

      const second = new Recorder(() => 'ack');
      await subscribe(subscription, second);
      const later = await broker.publish(topic, { data: { n: 'later' } });
      await eventually(() => expect(second.deliveries.map((d) => d.id)).toEqual([backlog, later]));
      await new Promise((resolve) => setTimeout(resolve, 500));

      await broker.seekToSnapshot(subscription, snapshot);
      await eventually(() => expect(second.deliveries).toHaveLength(4));
      expect(new Set(second.deliveries.slice(2).map((d) => d.id))).toEqual(
        new Set([backlog, later]),
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(second.deliveries.map((d) => d.id)).not.toContain(acked);

      await expect(
        broker.seekToSnapshot(subscription, `${snapshot}-missing`),
      ).rejects.toBeInstanceOf(SnapshotNotFoundError);
      await expect(
        broker.seekToSnapshot(`${subscription}-missing`, snapshot),
      ).rejects.toBeInstanceOf(SubscriptionNotFoundError);
      await expect(broker.seek(`${subscription}-missing`, new Date())).rejects.toBeInstanceOf(
        SubscriptionNotFoundError,
      );
    });
  });
}
