import type { PubSub } from '@google-cloud/pubsub';
import type { MessageListener, ReceivedMessage, SubscriptionHandle } from './broker.port';
import { grpcCode, GRPC_DEADLINE_EXCEEDED, GRPC_NOT_FOUND } from './grpc-status';
import { SubscriptionNotFoundError } from './messaging.errors';

/** An empty pull waits this long before the next (the emulator answers empty at once). */
const IDLE_MS = 200;
/** A failed pull (Pub/Sub unavailable) waits this long. */
const RETRY_MS = 1_000;
/** A pull waits at most this long for a message (it also bounds a pull left over at close). */
const PULL_TIMEOUT_MS = 20_000;

interface PulledMessage {
  ackId?: string | null;
  deliveryAttempt?: number | null;
  message?: {
    messageId?: string | null;
    data?: Uint8Array | string | null;
    attributes?: Record<string, string> | null;
    publishTime?: { seconds?: number | string | null; nanos?: number | null } | null;
  } | null;
}

export interface OnDemandPullOptions {
  maxInFlight: number;
  /** Lease asked on receipt and on every extension (half-way through it). */
  ackDeadlineSeconds: number;
  maxLeaseExtensionSeconds: number;
  countDelivery: (id: string) => number;
  onError?: (error: Error) => void;
}

/**
 * Pulls only when the consumer has a free slot (synchronous Pull of at most the free slots), so
 * no message ever waits inside a busy consumer: with long steps on several replicas, a message
 * goes to a replica that can start it. (A streaming pull may hand a busy consumer a message it
 * then holds until a slot frees: GCP's server-side flow control prevents that, the emulator
 * does not.) Leases are extended here while a message is unsettled.
 */
export class OnDemandPull implements SubscriptionHandle {
  private readonly path: string;
  private inFlight = 0;
  private closed = false;
  /** The nack of every unsettled delivery: what close() gives back at once. */
  private readonly unsettled = new Set<() => void>();
  private wake: (() => void) | undefined;
  private readonly running: Promise<void>;

  constructor(
    private readonly pubsub: PubSub,
    subscription: string,
    private readonly onMessage: MessageListener,
    private readonly options: OnDemandPullOptions,
  ) {
    this.path = `projects/{{projectId}}/subscriptions/${subscription}`;
    this.running = this.loop(subscription);
  }

  /** Stops pulling; unsettled deliveries go back to Pub/Sub at once (as the streaming close). */
  close(): Promise<void> {
    this.closed = true;
    this.wake?.();
    for (const nack of [...this.unsettled]) nack();
    return Promise.resolve();
  }

  /** Resolves when the pull loop has ended (its last pull answered or failed). */
  stopped(): Promise<void> {
    return this.running;
  }

  private async loop(subscription: string): Promise<void> {
    while (!this.closed) {
      const free = this.options.maxInFlight - this.inFlight;
      if (free <= 0) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        continue;
      }
      try {
        const pulled = await this.call<{ receivedMessages?: PulledMessage[] | null }>(
          'pull',
          { maxMessages: free, returnImmediately: false },
          { timeout: PULL_TIMEOUT_MS },
        );
        const messages = pulled?.receivedMessages ?? [];
        for (const message of messages) {
          if (this.closed) this.giveBack(message.ackId ?? '');
          else this.deliver(message);
        }
        if (messages.length === 0) await this.pause(IDLE_MS);
      } catch (error) {
        if (this.closed) break;
        if (grpcCode(error) === GRPC_DEADLINE_EXCEEDED) continue; // an empty long poll
        this.options.onError?.(
          grpcCode(error) === GRPC_NOT_FOUND
            ? new SubscriptionNotFoundError(subscription, { cause: error })
            : (error as Error),
        );
        await this.pause(RETRY_MS);
      }
    }
  }

  private deliver(pulled: PulledMessage): void {
    const ackId = pulled.ackId ?? '';
    const id = pulled.message?.messageId ?? ackId;
    this.inFlight += 1;
    const lease = this.extendLease(ackId);
    let settled = false;
    const settle = (method: 'acknowledge' | 'modifyAckDeadline'): void => {
      if (settled) return;
      settled = true;
      clearInterval(lease);
      this.unsettled.delete(nack);
      this.inFlight -= 1;
      this.wake?.();
      if (method === 'acknowledge') {
        // A lost ack only means a redelivery, which every consumer tolerates.
        this.call(method, { ackIds: [ackId] }).catch(() => undefined);
      } else this.giveBack(ackId);
    };
    const nack = (): void => settle('modifyAckDeadline');
    this.unsettled.add(nack);
    const received: ReceivedMessage = {
      id,
      data: toBuffer(pulled.message?.data),
      attributes: Object.freeze({ ...(pulled.message?.attributes ?? {}) }),
      deliveryAttempt: Math.max(pulled.deliveryAttempt ?? 0, this.options.countDelivery(id)),
      publishTime: toDate(pulled.message?.publishTime),
      ack: () => settle('acknowledge'),
      nack,
    };
    this.onMessage(received);
  }

  /** Redeliverable at once (a nack). */
  private giveBack(ackId: string): void {
    this.call('modifyAckDeadline', { ackIds: [ackId], ackDeadlineSeconds: 0 }).catch(
      () => undefined,
    );
  }

  /** Keeps the message leased while it is worked on, up to maxLeaseExtensionSeconds. */
  private extendLease(ackId: string): NodeJS.Timeout {
    const { ackDeadlineSeconds, maxLeaseExtensionSeconds } = this.options;
    const until = Date.now() + maxLeaseExtensionSeconds * 1000;
    const timer = setInterval(
      () => {
        if (Date.now() >= until) return clearInterval(timer);
        this.call('modifyAckDeadline', { ackIds: [ackId], ackDeadlineSeconds }).catch(
          () => undefined,
        );
      },
      (ackDeadlineSeconds * 1000) / 2,
    );
    timer.unref();
    return timer;
  }

  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private call<T>(
    method: string,
    reqOpts: Record<string, unknown>,
    gaxOpts: Record<string, unknown> = {},
  ): Promise<T | undefined> {
    return new Promise((resolve, reject) => {
      this.pubsub.request<T>(
        {
          client: 'SubscriberClient',
          method,
          reqOpts: { subscription: this.path, ...reqOpts },
          gaxOpts,
        },
        (error, response) => (error ? reject(error) : resolve(response ?? undefined)),
      );
    });
  }
}

function toBuffer(data: Uint8Array | string | null | undefined): Buffer {
  if (data === null || data === undefined) return Buffer.alloc(0);
  return typeof data === 'string' ? Buffer.from(data, 'base64') : Buffer.from(data);
}

function toDate(
  time: { seconds?: number | string | null; nanos?: number | null } | null | undefined,
): Date {
  const seconds = Number(time?.seconds ?? 0);
  return new Date(seconds * 1000 + Math.floor((time?.nanos ?? 0) / 1e6));
}
