import type {
  MessageBroker,
  MessageListener,
  OutgoingMessage,
  ReceivedMessage,
  SubscribeOptions,
  SubscriptionHandle,
} from '@tda/messaging';
import type { HarnessOutcome } from './harness-outcome';
import type { PushedMessage } from './pubsub-push.envelope';

/**
 * How the transport settled one pushed message.
 * - acked:  the transport is done with it. `outcome` is the harness's decision; absent when the
 *           transport itself refused the message before any handler (no or unknown messageType,
 *           a body that is not JSON: its message_invalid line says which).
 * - nacked: not done (a transient failure, draining, over capacity): Pub/Sub must redeliver.
 * - no_subscriber: nothing consumes the subscription (not started yet, or already closed).
 */
export type PushSettlement =
  { kind: 'acked'; outcome?: HarnessOutcome } | { kind: 'nacked' } | { kind: 'no_subscriber' };

/** One HTTP push delivery, seen by the transport as an ordinary ReceivedMessage. */
class PushDelivery implements ReceivedMessage {
  readonly id: string;
  readonly data: Buffer;
  readonly attributes: Readonly<Record<string, string>>;
  readonly publishTime: Date;
  private outcome: HarnessOutcome | undefined;
  private settled = false;

  constructor(
    message: PushedMessage,
    readonly deliveryAttempt: number,
    private readonly settle: (settlement: PushSettlement) => void,
  ) {
    this.id = message.messageId;
    this.data = message.data;
    this.attributes = message.attributes;
    this.publishTime = message.publishTime;
  }

  report(outcome: HarnessOutcome): void {
    this.outcome = outcome;
  }

  ack(): void {
    this.once(
      this.outcome === undefined ? { kind: 'acked' } : { kind: 'acked', outcome: this.outcome },
    );
  }

  nack(): void {
    this.once({ kind: 'nacked' });
  }

  private once(settlement: PushSettlement): void {
    if (this.settled) return;
    this.settled = true;
    this.settle(settlement);
  }
}

/**
 * Hands the harness's decision to a push delivery (the step-ready controller calls it for every
 * message): over HTTP an invalid message must answer 400, not the 2xx an ack means. A message
 * from the streaming pull client is left alone.
 */
export function reportDeliveryOutcome(message: ReceivedMessage, outcome: HarnessOutcome): void {
  if (message instanceof PushDelivery) message.report(outcome);
}

export interface PushSubscriptionBrokerOptions {
  /** Per-process delivery counts kept for messages without Pub/Sub's count. Default 10 000. */
  attemptCacheSize?: number;
}

/**
 * The transport side of Pub/Sub push. PubSubServer subscribes through it exactly as through the
 * streaming pull client, but subscribe() only registers the listener: no pull stream is opened
 * (a Cloud Run Service fed by push has no CPU between requests). The push route hands each
 * authenticated envelope to `deliver()`, which runs it through the same transport (messageType
 * routing, JSON decoding, in-flight bound, drain, one outcome log line) and the same harness as
 * a pulled message, and resolves with how the transport settled it.
 *
 * publish() and seek() go to the wrapped broker (the step events are still published to
 * Pub/Sub); close() does not close it: the backends own it.
 *
 * deliveryAttempt: Pub/Sub puts it in the envelope only when the subscription has a dead-letter
 * policy; like GooglePubSubBroker, this counts deliveries per message id itself and uses
 * max(Pub/Sub's count, own count) — a lower bound when several instances share the subscription.
 */
export class PushSubscriptionBroker implements MessageBroker {
  private readonly listeners = new Map<string, MessageListener>();
  private readonly seen = new Map<string, number>();
  private readonly attemptCacheSize: number;

  constructor(
    private readonly broker: MessageBroker,
    options: PushSubscriptionBrokerOptions = {},
  ) {
    this.attemptCacheSize = options.attemptCacheSize ?? 10_000;
  }

  publish(topic: string, message: OutgoingMessage): Promise<string> {
    return this.broker.publish(topic, message);
  }

  seek(subscription: string, time: Date): Promise<void> {
    return this.broker.seek(subscription, time);
  }

  /** Registers the transport's listener; `options` (flow control, leases) are the transport's own. */
  subscribe(
    subscription: string,
    onMessage: MessageListener,
    _options: SubscribeOptions,
  ): Promise<SubscriptionHandle> {
    if (this.listeners.has(subscription)) {
      return Promise.reject(
        new Error(`push subscription ${subscription} already has a consumer in this process`),
      );
    }
    this.listeners.set(subscription, onMessage);
    return Promise.resolve({
      close: () => {
        if (this.listeners.get(subscription) === onMessage) this.listeners.delete(subscription);
        return Promise.resolve();
      },
    });
  }

  /**
   * Delivers one pushed message to the consumer of `subscription` and resolves once the
   * transport acked or nacked it (PubSubServer settles every delivery exactly once).
   */
  deliver(
    subscription: string,
    message: PushedMessage,
    pubsubDeliveryAttempt?: number,
  ): Promise<PushSettlement> {
    const listener = this.listeners.get(subscription);
    if (listener === undefined) return Promise.resolve({ kind: 'no_subscriber' });
    const deliveryAttempt = Math.max(pubsubDeliveryAttempt ?? 0, this.count(message.messageId));
    return new Promise<PushSettlement>((resolve) => {
      const delivery = new PushDelivery(message, deliveryAttempt, resolve);
      try {
        listener(delivery);
      } catch {
        // A listener must not throw (PubSubServer does not); if one does, Pub/Sub retries.
        delivery.nack();
      }
    });
  }

  /** Nothing to release: the wrapped broker belongs to the backends. */
  close(): Promise<void> {
    return Promise.resolve();
  }

  private count(messageId: string): number {
    const count = (this.seen.get(messageId) ?? 0) + 1;
    // Re-insert so the Map's insertion order is recency order; evict the oldest.
    this.seen.delete(messageId);
    this.seen.set(messageId, count);
    if (this.seen.size > this.attemptCacheSize) {
      const oldest = this.seen.keys().next();
      if (oldest.done !== true) this.seen.delete(oldest.value);
    }
    return count;
  }
}
