/**
 * The messaging port (DESIGN.md §4). Services depend on these interfaces only; the adapters are
 * Google Pub/Sub (emulator or GCP) and an in-process broker with the same at-least-once
 * semantics, so every service and test runs on either.
 */

/** Pub/Sub attributes: string to string, small (routing, ids, traceparent). */
export type MessageAttributes = Readonly<Record<string, string>>;

export interface OutgoingMessage {
  /** An object is sent as UTF-8 JSON; a Buffer is sent as is. */
  data: object | Buffer;
  attributes?: Record<string, string>;
}

/** What services use to send: publish only. */
export interface Publisher {
  /** Resolves with the broker-assigned message id once the broker has accepted the message. */
  publish(topic: string, message: OutgoingMessage): Promise<string>;
}

/**
 * One delivery of a message. The same message (same `id`) may be delivered more than once:
 * after a nack, after the ack deadline expired, or as a plain duplicate. Only the first of
 * ack()/nack() on a delivery counts; later calls are ignored.
 */
export interface ReceivedMessage {
  readonly id: string;
  readonly data: Buffer;
  readonly attributes: MessageAttributes;
  /** 1 for the first delivery, then increasing with every redelivery of the same message. */
  readonly deliveryAttempt: number;
  readonly publishTime: Date;
  /** Done: the message will not be redelivered (except as a rare duplicate). */
  ack(): void;
  /** Not done: redeliver after the subscription's retry backoff. */
  nack(): void;
}

export interface SubscribeOptions {
  /**
   * Flow control: at most this many messages are delivered to `onMessage` and not yet
   * acked/nacked at any time on this subscription.
   */
  maxInFlight: number;
  /**
   * The lease (seconds) the client asks for on each receipt and each extension. Default: the
   * adapter's (Pub/Sub client: adaptive, starting at 10 s; in-memory: the subscription's ack
   * deadline).
   */
  ackDeadlineSeconds?: number;
  /**
   * How long the client keeps extending the lease of an unsettled message. 0 = never extend:
   * a message not settled within its ack deadline is redelivered (tests of expiry use this).
   * Default 3600.
   */
  maxLeaseExtensionSeconds?: number;
  /** Non-retryable subscription errors (e.g. the subscription does not exist). */
  onError?: (error: Error) => void;
}

export interface SubscriptionHandle {
  /** Stops delivery to this consumer; unsettled deliveries become redeliverable. */
  close(): Promise<void>;
}

export type MessageListener = (message: ReceivedMessage) => void;

export interface MessageBroker extends Publisher {
  subscribe(
    subscription: string,
    onMessage: MessageListener,
    options: SubscribeOptions,
  ): Promise<SubscriptionHandle>;
  /**
   * Replay (DESIGN.md §5.6): messages published at or after `time` and still retained
   * (retainAckedMessages) become unacked and are redelivered; older ones are marked acked.
   */
  seek(subscription: string, time: Date): Promise<void>;
  /**
   * Shutdown: flushes pending publishes (Pub/Sub batches them) and stops timers. Close
   * subscriptions (or the PubSubServer) first.
   */
  close(): Promise<void>;
}

/** The bytes a publish sends for `data`. */
export function encodeMessageData(data: object | Buffer): Buffer {
  return Buffer.isBuffer(data) ? data : Buffer.from(JSON.stringify(data), 'utf8');
}
