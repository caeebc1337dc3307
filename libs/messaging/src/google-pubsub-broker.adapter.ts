import {
  Duration,
  SubscriptionCloseBehaviors,
  type Message,
  type PubSub,
  type SubscriptionOptions,
  type Topic,
} from '@google-cloud/pubsub';
import {
  encodeMessageData,
  isValidSnapshotName,
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
  grpcCode,
  GRPC_ALREADY_EXISTS,
  GRPC_FAILED_PRECONDITION,
  GRPC_NOT_FOUND,
} from './grpc-status';
import {
  InvalidSnapshotNameError,
  SnapshotAlreadyExistsError,
  SnapshotNotFoundError,
  SubscriptionNotFoundError,
  TopologyError,
} from './messaging.errors';
import { OnDemandPull } from './on-demand-pull';

export interface GooglePubSubBrokerOptions {
  /** A configured client: `new PubSub({ projectId, apiEndpoint, emulatorMode })` or ADC. */
  pubsub: PubSub;
  /**
   * How many message ids per subscription the redelivery counter remembers (see
   * deliveryAttempt below). Oldest are forgotten first. Default 10 000.
   */
  attemptCacheSize?: number;
  /** Upper bound for closing one subscription stream. Default 5 s. */
  closeTimeoutMs?: number;
}

const DEFAULT_MAX_LEASE_EXTENSION_SECONDS = 3600;
/** How long acks and nacks wait to be sent together (the client's default is 100 ms). */
const ACK_FLUSH_MS = 1;
/**
 * How long a publish waits for others to batch with (the client's default is 10 ms). TDA's
 * messages are few and each one is on a run's critical path: a hop should not idle for a batch.
 */
const PUBLISH_BATCH_MS = 1;
/** The lease an on-demand pull asks for when none is configured (extended half-way). */
const ON_DEMAND_ACK_DEADLINE_SECONDS = 60;

/** `projects/p/snapshots/name` → `name` (the client returns full resource names). */
function shortName(name: string): string {
  const slash = name.lastIndexOf('/');
  return slash < 0 ? name : name.slice(slash + 1);
}

interface ProtoTimestamp {
  seconds?: number | string | { toString(): string } | null;
  nanos?: number | null;
}

interface ProtoSnapshot {
  name?: string | null;
  topic?: string | null;
  expireTime?: ProtoTimestamp | null;
}

function toDate(value: ProtoTimestamp | null | undefined): Date | undefined {
  if (value === null || value === undefined || value.seconds === null) return undefined;
  const seconds = Number(String(value.seconds ?? 0));
  const ms = seconds * 1000 + Math.floor((value.nanos ?? 0) / 1e6);
  return Number.isFinite(ms) ? new Date(ms) : undefined;
}

function snapshotInfo(fallbackName: string, proto: ProtoSnapshot | null | undefined): SnapshotInfo {
  const info: SnapshotInfo = {
    name: shortName(proto?.name ?? fallbackName),
    topic: shortName(proto?.topic ?? ''),
  };
  const expireTime = toDate(proto?.expireTime);
  if (expireTime !== undefined) info.expireTime = expireTime;
  return info;
}

/**
 * MessageBroker on @google-cloud/pubsub (GCP or the emulator).
 *
 * deliveryAttempt: Pub/Sub fills `message.deliveryAttempt` only when the subscription has a
 * dead-letter policy (and the emulator only then too). As a fallback this adapter counts
 * deliveries per message id itself and exposes max(server count, own count); the own count is
 * per process, so it is a lower bound when several workers share a subscription.
 *
 * Flow control: maxInFlight becomes flowControl.maxMessages with allowExcessMessages=false, on
 * a single stream, so the client never holds more than maxInFlight undispatched messages.
 */
export class GooglePubSubBroker implements MessageBroker, SnapshotBroker {
  private readonly pubsub: PubSub;
  private readonly attemptCacheSize: number;
  private readonly closeTimeoutMs: number;
  private readonly topics = new Map<string, Topic>();
  private readonly deliveries = new Map<string, number>();

  constructor(options: GooglePubSubBrokerOptions) {
    this.pubsub = options.pubsub;
    this.attemptCacheSize = options.attemptCacheSize ?? 10_000;
    this.closeTimeoutMs = options.closeTimeoutMs ?? 5_000;
  }

  async publish(topic: string, message: OutgoingMessage): Promise<string> {
    return this.topic(topic).publishMessage({
      data: encodeMessageData(message.data),
      attributes: { ...message.attributes },
    });
  }

  async subscribe(
    name: string,
    onMessage: MessageListener,
    options: SubscribeOptions,
  ): Promise<SubscriptionHandle> {
    if (!(options.maxInFlight >= 1)) throw new RangeError('maxInFlight must be >= 1');
    if (options.delivery === 'on-demand') {
      return new OnDemandPull(this.pubsub, name, onMessage, {
        maxInFlight: options.maxInFlight,
        ackDeadlineSeconds: options.ackDeadlineSeconds ?? ON_DEMAND_ACK_DEADLINE_SECONDS,
        maxLeaseExtensionSeconds:
          options.maxLeaseExtensionSeconds ?? DEFAULT_MAX_LEASE_EXTENSION_SECONDS,
        countDelivery: (id) => this.countDelivery(id),
        ...(options.onError === undefined ? {} : { onError: options.onError }),
      });
    }
    return this.subscribeStreaming(name, onMessage, options);
  }

  /** A streaming pull: the client's lease management, flow control and ack batching. */
  private subscribeStreaming(
    name: string,
    onMessage: MessageListener,
    options: SubscribeOptions,
  ): SubscriptionHandle {
    const subscription = this.pubsub.subscription(name, this.streamingSettings(options));
    const onPubSubMessage = (message: Message): void => onMessage(this.received(message));
    const onError = (error: Error): void => {
      options.onError?.(
        grpcCode(error) === GRPC_NOT_FOUND
          ? new SubscriptionNotFoundError(name, { cause: error })
          : error,
      );
    };
    subscription.on('error', onError);
    subscription.on('message', onPubSubMessage);

    let closing: Promise<void> | undefined;
    return {
      close: () => {
        closing ??= (async () => {
          await withTimeout(subscription.close(), this.closeTimeoutMs + 1_000);
          subscription.removeListener('message', onPubSubMessage);
          subscription.removeListener('error', onError);
        })();
        return closing;
      },
    };
  }

  private streamingSettings(options: SubscribeOptions): SubscriptionOptions {
    const leaseSeconds = options.ackDeadlineSeconds;
    return {
      flowControl: { maxMessages: options.maxInFlight, allowExcessMessages: false },
      streamingOptions: { maxStreams: 1 },
      // A fixed lease length instead of the client's adaptive 99th-percentile deadline.
      ...(leaseSeconds === undefined
        ? {}
        : {
            minAckDeadline: Duration.from({ seconds: leaseSeconds }),
            maxAckDeadline: Duration.from({ seconds: leaseSeconds }),
          }),
      maxExtensionTime: Duration.from({
        seconds: options.maxLeaseExtensionSeconds ?? DEFAULT_MAX_LEASE_EXTENSION_SECONDS,
      }),
      // Acks and nacks go out within ACK_FLUSH_MS instead of the client's 100 ms: Pub/Sub's
      // server-side flow control counts a message as outstanding until its ack arrives, so with
      // maxInFlight 10 the default held a subscription at ~95 msg/s (bench floors: 16× with it).
      batching: { maxMilliseconds: ACK_FLUSH_MS },
      // Whatever is still unsettled at close goes back to Pub/Sub at once (the transport has
      // already waited for its handlers).
      closeOptions: {
        behavior: SubscriptionCloseBehaviors.NackImmediately,
        timeout: Duration.from({ milliseconds: this.closeTimeoutMs }),
      },
    };
  }

  /** The port's delivery of a client message: only the first of ack()/nack() counts. */
  private received(message: Message): ReceivedMessage {
    const own = this.countDelivery(message.id);
    let settled = false;
    const settle = (done: () => void) => () => {
      if (settled) return;
      settled = true;
      done();
    };
    return {
      id: message.id,
      data: message.data,
      attributes: Object.freeze({ ...message.attributes }),
      deliveryAttempt: Math.max(message.deliveryAttempt || 0, own),
      publishTime: new Date(message.publishTime.getTime()),
      ack: settle(() => message.ack()),
      nack: settle(() => message.nack()),
    };
  }

  /** Deliveries of a message id seen by this process (the bounded fallback deliveryAttempt). */
  private countDelivery(id: string): number {
    const seen = this.deliveries;
    const count = (seen.get(id) ?? 0) + 1;
    // Re-insert so the Map's insertion order is recency order; evict the oldest.
    seen.delete(id);
    seen.set(id, count);
    if (seen.size > this.attemptCacheSize) {
      const oldest = seen.keys().next();
      if (oldest.done !== true) seen.delete(oldest.value);
    }
    return count;
  }

  async seek(subscription: string, time: Date): Promise<void> {
    try {
      await this.pubsub.subscription(subscription).seek(time);
    } catch (error) {
      if (grpcCode(error) === GRPC_NOT_FOUND) {
        throw new SubscriptionNotFoundError(subscription, { cause: error });
      }
      throw error;
    }
  }

  async createSnapshot(subscription: string, snapshot: string): Promise<SnapshotInfo> {
    if (!isValidSnapshotName(snapshot)) throw new InvalidSnapshotNameError(snapshot);
    try {
      const [, response] = await this.pubsub.subscription(subscription).createSnapshot(snapshot);
      return snapshotInfo(snapshot, response as ProtoSnapshot | undefined);
    } catch (error) {
      const code = grpcCode(error);
      if (code === GRPC_ALREADY_EXISTS)
        throw new SnapshotAlreadyExistsError(snapshot, { cause: error });
      if (code === GRPC_NOT_FOUND)
        throw new SubscriptionNotFoundError(subscription, { cause: error });
      throw error;
    }
  }

  async getSnapshot(snapshot: string): Promise<SnapshotInfo | null> {
    if (!isValidSnapshotName(snapshot)) return null;
    // The client has no Snapshot#get; the generated SubscriberClient does.
    const proto = await new Promise<ProtoSnapshot | null>((resolve, reject) => {
      this.pubsub.request<ProtoSnapshot>(
        {
          client: 'SubscriberClient',
          method: 'getSnapshot',
          reqOpts: { snapshot: `projects/{{projectId}}/snapshots/${snapshot}` },
          gaxOpts: {},
        },
        (error, response) => {
          if (error === null || error === undefined) resolve(response ?? null);
          else if (grpcCode(error) === GRPC_NOT_FOUND) resolve(null);
          else reject(error);
        },
      );
    });
    return proto === null ? null : snapshotInfo(snapshot, proto);
  }

  async seekToSnapshot(subscription: string, snapshot: string): Promise<void> {
    try {
      await this.pubsub.subscription(subscription).seek(snapshot);
    } catch (error) {
      const code = grpcCode(error);
      if (code === GRPC_NOT_FOUND) {
        // The same status for either resource: ask which one is missing.
        const [exists] = await this.pubsub.subscription(subscription).exists();
        if (!exists) throw new SubscriptionNotFoundError(subscription, { cause: error });
        throw new SnapshotNotFoundError(snapshot, { cause: error });
      }
      if (code === GRPC_FAILED_PRECONDITION) {
        throw new TopologyError(
          `snapshot ${snapshot} cannot be applied to ${subscription} (another topic?)`,
        );
      }
      throw error;
    }
  }

  /** Flushes batched publishes; call on shutdown. Does not close the PubSub client. */
  async close(): Promise<void> {
    await Promise.all([...this.topics.values()].map((topic) => topic.flush()));
  }

  private topic(name: string): Topic {
    let topic = this.topics.get(name);
    if (topic === undefined) {
      // One Topic object per name: each carries its own publish batcher.
      topic = this.pubsub.topic(name, { batching: { maxMilliseconds: PUBLISH_BATCH_MS } });
      this.topics.set(name, topic);
    }
    return topic;
  }
}

async function withTimeout(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      promise,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
