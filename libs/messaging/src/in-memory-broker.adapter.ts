import {
  encodeMessageData,
  isValidSnapshotName,
  type MessageAttributes,
  type MessageBroker,
  type SnapshotBroker,
  type SnapshotInfo,
  type MessageListener,
  type OutgoingMessage,
  type ReceivedMessage,
  type SubscribeOptions,
  type SubscriptionHandle,
} from './broker.port';
import {
  InvalidSnapshotNameError,
  SnapshotAlreadyExistsError,
  SnapshotNotFoundError,
  SubscriptionNotFoundError,
  TopicNotFoundError,
  TopologyError,
} from './messaging.errors';
import type { Topology } from './topology';

/** Settings of one in-memory subscription, in milliseconds. */
export interface InMemorySubscriptionConfig {
  topic: string;
  ackDeadlineMs: number;
  minBackoffMs: number;
  maxBackoffMs: number;
  retainAckedMessages: boolean;
  /** Acked messages older than this are forgotten (no seek back past it). Default: forever. */
  messageRetentionMs?: number;
  /** Like GCP: after this many deliveries the message is forwarded to `topic` and acked. */
  deadLetter?: { topic: string; maxDeliveryAttempts: number };
}

export interface InMemoryBrokerOptions {
  /**
   * Multiplies every duration taken from a Topology (ack deadline, backoff), so tests can run
   * the production topology at 1/100 speed. Default 1.
   */
  timeScale?: number;
  /** Probability that a first delivery is followed by an extra duplicate delivery. Default 0. */
  duplicateRate?: number;
  /** Source of randomness for duplicateRate (inject for determinism). */
  random?: () => number;
}

export interface InMemorySubscriptionStats {
  /** Waiting for delivery (including those waiting out a backoff). */
  pending: number;
  /** Delivered and not yet acked/nacked/expired. */
  outstanding: number;
  acked: number;
  deadLettered: number;
  deliveries: number;
}

interface StoredMessage {
  id: string;
  data: Buffer;
  attributes: MessageAttributes;
  publishTime: Date;
}

interface MessageState {
  message: StoredMessage;
  acked: boolean;
  deliveries: number;
}

interface Consumer {
  onMessage: MessageListener;
  maxInFlight: number;
  inFlight: number;
  closed: boolean;
  ackDeadlineMs: number | undefined;
  maxLeaseExtensionMs: number;
}

interface Lease {
  state: MessageState;
  consumer: Consumer;
  deliveredAt: number;
  timer: NodeJS.Timeout;
}

interface SubscriptionState {
  name: string;
  config: InMemorySubscriptionConfig;
  /** Message ids in delivery order; an id may appear twice (a duplicate). */
  queue: string[];
  /** Redeliveries waiting out their backoff. */
  backoffTimers: Set<NodeJS.Timeout>;
  messages: Map<string, MessageState>;
  leases: Map<number, Lease>;
  consumers: Consumer[];
  nextConsumer: number;
  ackedCount: number;
  deadLettered: number;
  deliveries: number;
  pumpScheduled: boolean;
}

interface SnapshotState {
  info: SnapshotInfo;
  /** Messages unacked on the source subscription when the snapshot was taken. */
  unacked: ReadonlySet<string>;
  /** The last message id published before it: later ones are replayed too. */
  lastMessageSeq: number;
}

const DEFAULT_MAX_LEASE_EXTENSION_MS = 3_600_000;
/** Pub/Sub's snapshot lifetime: 7 days minus the age of the oldest unacked message. */
const SNAPSHOT_LIFETIME_MS = 7 * 24 * 3_600_000;

/**
 * An in-process broker with Pub/Sub's at-least-once semantics (DESIGN.md §7 memory mode):
 * topics fan out to their subscriptions; delivery is asynchronous; a nack or an expired ack
 * deadline redelivers after an exponential backoff between the subscription's min and max;
 * deliveryAttempt counts deliveries per message and subscription; flow control bounds
 * unsettled deliveries per consumer; duplicates happen when asked (duplicateRate,
 * injectDuplicate); acked messages are retained for seek when configured; dead-lettering
 * follows GCP. Not durable: state lives in this object.
 */
export class InMemoryBroker implements MessageBroker, SnapshotBroker {
  private readonly topics = new Map<string, Set<string>>();
  private readonly subscriptions = new Map<string, SubscriptionState>();
  private readonly snapshots = new Map<string, SnapshotState>();
  private readonly timeScale: number;
  private readonly duplicateRate: number;
  private readonly random: () => number;
  private nextMessageId = 1;
  private nextLeaseId = 1;
  private closed = false;

  constructor(options: InMemoryBrokerOptions = {}) {
    this.timeScale = options.timeScale ?? 1;
    this.duplicateRate = options.duplicateRate ?? 0;
    this.random = options.random ?? Math.random;
  }

  // -- administration --------------------------------------------------------------------------

  createTopic(name: string): void {
    if (!this.topics.has(name)) this.topics.set(name, new Set());
  }

  /** Creates the subscription, or updates its settings if it exists on the same topic. */
  createSubscription(name: string, config: InMemorySubscriptionConfig): void {
    const subscribers = this.topics.get(config.topic);
    if (subscribers === undefined) throw new TopicNotFoundError(config.topic);
    if (config.deadLetter !== undefined && !this.topics.has(config.deadLetter.topic)) {
      throw new TopicNotFoundError(config.deadLetter.topic);
    }
    const existing = this.subscriptions.get(name);
    if (existing !== undefined) {
      if (existing.config.topic !== config.topic) {
        throw new TopologyError(`subscription ${name} is attached to ${existing.config.topic}`);
      }
      existing.config = { ...config };
      return;
    }
    subscribers.add(name);
    this.subscriptions.set(name, {
      name,
      config: { ...config },
      queue: [],
      backoffTimers: new Set(),
      messages: new Map(),
      leases: new Map(),
      consumers: [],
      nextConsumer: 0,
      ackedCount: 0,
      deadLettered: 0,
      deliveries: 0,
      pumpScheduled: false,
    });
  }

  /** Creates every topic and subscription of a Topology (durations scaled by timeScale). */
  applyTopology(topology: Topology): void {
    for (const { name } of topology.topics) this.createTopic(name);
    for (const { name, topic, settings } of topology.subscriptions) {
      this.createSubscription(name, {
        topic,
        ackDeadlineMs: settings.ackDeadlineSeconds * 1000 * this.timeScale,
        minBackoffMs: settings.minimumBackoffSeconds * 1000 * this.timeScale,
        maxBackoffMs: settings.maximumBackoffSeconds * 1000 * this.timeScale,
        retainAckedMessages: settings.retainAckedMessages,
        messageRetentionMs: settings.messageRetentionSeconds * 1000 * this.timeScale,
        ...(settings.deadLetter ? { deadLetter: { ...settings.deadLetter } } : {}),
      });
    }
  }

  stats(subscription: string): InMemorySubscriptionStats {
    const sub = this.requireSubscription(subscription);
    let waiting = 0;
    for (const state of sub.messages.values()) if (!state.acked) waiting++;
    return {
      pending: Math.max(0, waiting - sub.leases.size),
      outstanding: sub.leases.size,
      acked: sub.ackedCount,
      deadLettered: sub.deadLettered,
      deliveries: sub.deliveries,
    };
  }

  /**
   * Test hook: delivers message `messageId` once more on `subscription`, whatever its state
   * (in flight, acked and retained, ...), exactly like a Pub/Sub duplicate.
   */
  injectDuplicate(subscription: string, messageId: string): void {
    const sub = this.requireSubscription(subscription);
    if (!sub.messages.has(messageId)) {
      throw new Error(
        `message ${messageId} is not known to ${subscription} (acked, not retained?)`,
      );
    }
    sub.queue.push(messageId);
    this.schedulePump(sub);
  }

  /** Stops all timers and consumers; for tests and process shutdown. */
  async close(): Promise<void> {
    this.closed = true;
    for (const sub of this.subscriptions.values()) {
      for (const timer of sub.backoffTimers) clearTimeout(timer);
      sub.backoffTimers.clear();
      for (const lease of sub.leases.values()) clearTimeout(lease.timer);
      sub.leases.clear();
      for (const consumer of sub.consumers) consumer.closed = true;
      sub.consumers = [];
    }
  }

  // -- MessageBroker -----------------------------------------------------------------------------

  async publish(topic: string, message: OutgoingMessage): Promise<string> {
    const subscribers = this.topics.get(topic);
    if (subscribers === undefined) throw new TopicNotFoundError(topic);
    const stored: StoredMessage = {
      id: String(this.nextMessageId++),
      data: encodeMessageData(message.data),
      attributes: Object.freeze({ ...message.attributes }),
      publishTime: new Date(),
    };
    for (const name of subscribers) {
      const sub = this.subscriptions.get(name);
      if (sub === undefined) continue;
      this.pruneRetained(sub, stored.publishTime.getTime());
      sub.messages.set(stored.id, { message: stored, acked: false, deliveries: 0 });
      sub.queue.push(stored.id);
      this.schedulePump(sub);
    }
    return stored.id;
  }

  async subscribe(
    subscription: string,
    onMessage: MessageListener,
    options: SubscribeOptions,
  ): Promise<SubscriptionHandle> {
    const sub = this.requireSubscription(subscription);
    if (!(options.maxInFlight >= 1)) throw new RangeError('maxInFlight must be >= 1');
    const consumer: Consumer = {
      onMessage,
      maxInFlight: options.maxInFlight,
      inFlight: 0,
      closed: false,
      ackDeadlineMs:
        options.ackDeadlineSeconds === undefined
          ? undefined
          : options.ackDeadlineSeconds * 1000 * this.timeScale,
      maxLeaseExtensionMs:
        options.maxLeaseExtensionSeconds === undefined
          ? DEFAULT_MAX_LEASE_EXTENSION_MS
          : options.maxLeaseExtensionSeconds * 1000 * this.timeScale,
    };
    sub.consumers.push(consumer);
    this.schedulePump(sub);
    return {
      close: async () => {
        if (consumer.closed) return;
        consumer.closed = true;
        sub.consumers = sub.consumers.filter((c) => c !== consumer);
        // Like the Pub/Sub client's close(): what this consumer still holds is released for
        // redelivery now instead of waiting for its deadline.
        for (const [leaseId, lease] of sub.leases) {
          if (lease.consumer === consumer) this.release(sub, leaseId, 0);
        }
      },
    };
  }

  async seek(subscription: string, time: Date): Promise<void> {
    const at = time.getTime();
    this.rewind(this.requireSubscription(subscription), (state) => {
      return state.message.publishTime.getTime() >= at;
    });
  }

  async createSnapshot(subscription: string, snapshot: string): Promise<SnapshotInfo> {
    if (!isValidSnapshotName(snapshot)) throw new InvalidSnapshotNameError(snapshot);
    const sub = this.requireSubscription(subscription);
    if (this.snapshots.has(snapshot)) throw new SnapshotAlreadyExistsError(snapshot);
    const unacked = new Set<string>();
    let oldestUnacked = Date.now();
    for (const state of sub.messages.values()) {
      if (state.acked) continue;
      unacked.add(state.message.id);
      oldestUnacked = Math.min(oldestUnacked, state.message.publishTime.getTime());
    }
    const info: SnapshotInfo = {
      name: snapshot,
      topic: sub.config.topic,
      expireTime: new Date(oldestUnacked + SNAPSHOT_LIFETIME_MS),
    };
    this.snapshots.set(snapshot, { info, unacked, lastMessageSeq: this.nextMessageId - 1 });
    return { ...info };
  }

  async getSnapshot(snapshot: string): Promise<SnapshotInfo | null> {
    const found = this.snapshots.get(snapshot);
    return found === undefined ? null : { ...found.info };
  }

  async seekToSnapshot(subscription: string, snapshot: string): Promise<void> {
    const sub = this.requireSubscription(subscription);
    const found = this.snapshots.get(snapshot);
    if (found === undefined) throw new SnapshotNotFoundError(snapshot);
    if (found.info.topic !== sub.config.topic) {
      // Pub/Sub answers FAILED_PRECONDITION: a snapshot only applies to its own topic.
      throw new TopologyError(
        `snapshot ${snapshot} is of topic ${found.info.topic}, subscription ${subscription} of ${sub.config.topic}`,
      );
    }
    this.rewind(sub, (state) => {
      return found.unacked.has(state.message.id) || Number(state.message.id) > found.lastMessageSeq;
    });
  }

  /**
   * A seek: outstanding deliveries become stale (their ack/nack is ignored, as after a real
   * seek); retained messages for which `replay` holds become unacked and are queued in publish
   * order, every other one counts as acked.
   */
  private rewind(sub: SubscriptionState, replay: (state: MessageState) => boolean): void {
    for (const timer of sub.backoffTimers) clearTimeout(timer);
    sub.backoffTimers.clear();
    for (const lease of sub.leases.values()) {
      clearTimeout(lease.timer);
      lease.consumer.inFlight--;
    }
    sub.leases.clear();
    sub.queue = [];
    const ordered = [...sub.messages.values()].sort(
      (a, b) => a.message.publishTime.getTime() - b.message.publishTime.getTime(),
    );
    for (const state of ordered) {
      if (replay(state)) {
        state.acked = false;
        sub.queue.push(state.message.id);
      } else {
        state.acked = true;
        if (!sub.config.retainAckedMessages) sub.messages.delete(state.message.id);
      }
    }
    this.schedulePump(sub);
  }

  // -- delivery ----------------------------------------------------------------------------------

  private requireSubscription(name: string): SubscriptionState {
    const sub = this.subscriptions.get(name);
    if (sub === undefined) throw new SubscriptionNotFoundError(name);
    return sub;
  }

  private schedulePump(sub: SubscriptionState): void {
    if (sub.pumpScheduled || this.closed) return;
    sub.pumpScheduled = true;
    // Asynchronous like the real thing: publish() returns before anyone sees the message.
    setImmediate(() => {
      sub.pumpScheduled = false;
      this.pump(sub);
    });
  }

  private pickConsumer(sub: SubscriptionState): Consumer | undefined {
    const count = sub.consumers.length;
    for (let i = 0; i < count; i++) {
      const consumer = sub.consumers[(sub.nextConsumer + i) % count];
      if (consumer !== undefined && !consumer.closed && consumer.inFlight < consumer.maxInFlight) {
        sub.nextConsumer = (sub.nextConsumer + i + 1) % count;
        return consumer;
      }
    }
    return undefined;
  }

  private pump(sub: SubscriptionState): void {
    while (sub.queue.length > 0 && !this.closed) {
      const consumer = this.pickConsumer(sub);
      if (consumer === undefined) return;
      const id = sub.queue.shift();
      const state = id === undefined ? undefined : sub.messages.get(id);
      if (state === undefined) continue;
      this.deliver(sub, consumer, state);
    }
  }

  private deliver(sub: SubscriptionState, consumer: Consumer, state: MessageState): void {
    const { deadLetter } = sub.config;
    if (deadLetter !== undefined && state.deliveries >= deadLetter.maxDeliveryAttempts) {
      if (!state.acked) this.forwardToDeadLetter(sub, state, deadLetter.topic);
      return;
    }
    state.deliveries++;
    sub.deliveries++;
    const deliveryAttempt = state.deliveries;
    const leaseId = this.nextLeaseId++;
    const deadlineMs = consumer.ackDeadlineMs ?? sub.config.ackDeadlineMs;
    const lease: Lease = {
      state,
      consumer,
      deliveredAt: Date.now(),
      timer: setTimeout(() => this.onDeadline(sub, leaseId, deadlineMs), deadlineMs),
    };
    sub.leases.set(leaseId, lease);
    consumer.inFlight++;

    let settled = false;
    const message: ReceivedMessage = {
      id: state.message.id,
      data: state.message.data,
      attributes: state.message.attributes,
      deliveryAttempt,
      publishTime: state.message.publishTime,
      ack: () => {
        if (settled) return;
        settled = true;
        this.ack(sub, leaseId);
      },
      nack: () => {
        if (settled) return;
        settled = true;
        const current = sub.leases.get(leaseId);
        if (current !== undefined) this.release(sub, leaseId, this.backoffMs(sub, deliveryAttempt));
      },
    };
    if (deliveryAttempt === 1 && this.duplicateRate > 0 && this.random() < this.duplicateRate) {
      sub.queue.push(state.message.id);
    }
    setImmediate(() => {
      if (!consumer.closed) consumer.onMessage(message);
    });
  }

  private onDeadline(sub: SubscriptionState, leaseId: number, deadlineMs: number): void {
    const lease = sub.leases.get(leaseId);
    if (lease === undefined) return;
    const held = Date.now() - lease.deliveredAt;
    if (!lease.consumer.closed && held + deadlineMs <= lease.consumer.maxLeaseExtensionMs) {
      // The client is still working on it: extend, as the Pub/Sub client's lease manager does.
      lease.timer = setTimeout(() => this.onDeadline(sub, leaseId, deadlineMs), deadlineMs);
      return;
    }
    this.release(sub, leaseId, this.backoffMs(sub, lease.state.deliveries));
  }

  private ack(sub: SubscriptionState, leaseId: number): void {
    const lease = sub.leases.get(leaseId);
    // A stale delivery (deadline expired, seek, close): Pub/Sub ignores its ack.
    if (lease === undefined) return;
    this.endLease(sub, leaseId, lease);
    if (!lease.state.acked) {
      lease.state.acked = true;
      sub.ackedCount++;
    }
    if (!sub.config.retainAckedMessages && !this.isStillWanted(sub, lease.state.message.id)) {
      sub.messages.delete(lease.state.message.id);
    }
    this.schedulePump(sub);
  }

  /** Ends a lease without acking; the message is redelivered after `delayMs` unless acked. */
  private release(sub: SubscriptionState, leaseId: number, delayMs: number): void {
    const lease = sub.leases.get(leaseId);
    if (lease === undefined) return;
    this.endLease(sub, leaseId, lease);
    const { id } = lease.state.message;
    const requeue = (): void => {
      if (!lease.state.acked && sub.messages.get(id) === lease.state) {
        sub.queue.push(id);
      }
      this.schedulePump(sub);
    };
    if (delayMs <= 0) {
      requeue();
      return;
    }
    const timer = setTimeout(() => {
      sub.backoffTimers.delete(timer);
      requeue();
    }, delayMs);
    sub.backoffTimers.add(timer);
    this.schedulePump(sub);
  }

  private endLease(sub: SubscriptionState, leaseId: number, lease: Lease): void {
    clearTimeout(lease.timer);
    sub.leases.delete(leaseId);
    lease.consumer.inFlight--;
  }

  private isStillWanted(sub: SubscriptionState, id: string): boolean {
    if (sub.queue.includes(id)) return true;
    for (const lease of sub.leases.values()) if (lease.state.message.id === id) return true;
    return false;
  }

  /** Forgets acked messages past retention (the map is in publish order, so stop early). */
  private pruneRetained(sub: SubscriptionState, now: number): void {
    const retention = sub.config.messageRetentionMs;
    if (retention === undefined) return;
    for (const [id, state] of sub.messages) {
      if (now - state.message.publishTime.getTime() <= retention) return;
      if (state.acked && !this.isStillWanted(sub, id)) sub.messages.delete(id);
    }
  }

  private backoffMs(sub: SubscriptionState, deliveryAttempt: number): number {
    const { minBackoffMs, maxBackoffMs } = sub.config;
    return Math.min(maxBackoffMs, minBackoffMs * 2 ** Math.max(0, deliveryAttempt - 1));
  }

  private forwardToDeadLetter(sub: SubscriptionState, state: MessageState, topic: string): void {
    state.acked = true;
    sub.ackedCount++;
    sub.deadLettered++;
    // Same attributes GCP adds, so code reading dead letters works on both.
    void this.publish(topic, {
      data: state.message.data,
      attributes: {
        ...state.message.attributes,
        CloudPubSubDeadLetterSourceDeliveryCount: String(state.deliveries),
        CloudPubSubDeadLetterSourceSubscription: sub.name,
      },
    }).catch(() => undefined);
  }
}
