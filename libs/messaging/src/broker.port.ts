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
  /**
   * 'streaming' (default): a streaming pull, messages arrive as the broker sends them.
   * 'on-demand': a pull only when a slot is free, so no message waits inside a busy consumer:
   * for long steps spread over replicas (BACKTEST). The in-memory broker delivers the same way
   * either way (to a consumer with a free slot).
   */
  delivery?: 'streaming' | 'on-demand';
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
   * SubscriptionNotFoundError if the subscription does not exist.
   */
  seek(subscription: string, time: Date): Promise<void>;
  /**
   * Shutdown: flushes pending publishes (Pub/Sub batches them) and stops timers. Close
   * subscriptions (or the PubSubServer) first.
   */
  close(): Promise<void>;
}

/** A saved ack state of a subscription (Pub/Sub snapshot), for seek replay. */
export interface SnapshotInfo {
  /** Short name (no `projects/.../snapshots/` prefix). */
  name: string;
  /** Short name of the topic of the subscription it was taken from. */
  topic: string;
  /**
   * When the broker may delete it. Pub/Sub sets it to (publish time of the oldest message unacked
   * at creation, or the creation time when there was none) + 7 days, so `expireTime - 7 days` is
   * a lower bound of the publish time of every message a seek to it replays.
   */
  expireTime?: Date;
}

/**
 * Snapshots (DESIGN.md §5.6 replay): both adapters implement them; a broker without them (a
 * test fake) simply does not, and callers check with supportsSnapshots.
 */
export interface SnapshotBroker {
  /**
   * Captures the subscription's ack state now: a later seek to it makes every message that was
   * unacked at this moment, or is published afterwards, unacked again. SnapshotAlreadyExistsError
   * if the name is taken, SubscriptionNotFoundError if the subscription does not exist.
   */
  createSnapshot(subscription: string, snapshot: string): Promise<SnapshotInfo>;
  /** null when there is no such snapshot. */
  getSnapshot(snapshot: string): Promise<SnapshotInfo | null>;
  /** SnapshotNotFoundError / SubscriptionNotFoundError when either is missing. */
  seekToSnapshot(subscription: string, snapshot: string): Promise<void>;
}

export function supportsSnapshots<T extends MessageBroker>(
  broker: T,
): broker is T & SnapshotBroker {
  const candidate = broker as Partial<SnapshotBroker>;
  return (
    typeof candidate.createSnapshot === 'function' &&
    typeof candidate.getSnapshot === 'function' &&
    typeof candidate.seekToSnapshot === 'function'
  );
}

/**
 * Pub/Sub resource name rules for snapshots: starts with a letter, 3..255 characters of letters,
 * digits and `-_.~+%`, not starting with `goog`.
 */
export const SNAPSHOT_NAME_PATTERN = /^(?!goog)[A-Za-z][A-Za-z0-9\-_.~+%]{2,254}$/;

export function isValidSnapshotName(name: unknown): name is string {
  return typeof name === 'string' && SNAPSHOT_NAME_PATTERN.test(name);
}

/** The bytes a publish sends for `data`. */
export function encodeMessageData(data: object | Buffer): Buffer {
  return Buffer.isBuffer(data) ? data : Buffer.from(JSON.stringify(data), 'utf8');
}
