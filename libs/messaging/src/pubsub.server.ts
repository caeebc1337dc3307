import { EventEmitter } from 'node:events';
import { CustomTransportStrategy, Server } from '@nestjs/microservices';
import {
  describeError,
  logEvent,
  withLogContext,
  type Logger,
  type LogLevel,
} from '@tda/observability';
import { lastValueFrom } from 'rxjs';
import type {
  MessageBroker,
  ReceivedMessage,
  SubscribeOptions,
  SubscriptionHandle,
} from './broker.port';
import { isHandlerOutcome } from './handler-outcome';
import { TransportStateError } from './messaging.errors';
import { PubSubContext } from './pubsub.context';

/** Nest transport id; pass it to @EventPattern(pattern, PUBSUB_TRANSPORT) in hybrid apps. */
export const PUBSUB_TRANSPORT = Symbol.for('tda.messaging.pubsub');

export interface PubSubServerOptions {
  broker: MessageBroker;
  /** Subscriptions this process consumes (e.g. stepReadySubscription('LLM_REPORT')). */
  subscriptions: readonly string[];
  logger: Logger;
  /** Bound on concurrently running handlers across all subscriptions. Default 10. */
  maxInFlight?: number;
  /** close(): how long to wait for running handlers. Default 8 s (Cloud Run allows 10 s). */
  drainTimeoutMs?: number;
  /** close(): how long to wait for each subscription to close. Default 5 s. */
  closeTimeoutMs?: number;
  /** Passed to MessageBroker.subscribe (lease length / extension). */
  ackDeadlineSeconds?: number;
  maxLeaseExtensionSeconds?: number;
  /** Passed to MessageBroker.subscribe: 'on-demand' pulls only into a free slot. */
  delivery?: SubscribeOptions['delivery'];
}

export type PubSubServerStatus = 'connected' | 'draining' | 'disconnected';

type PubSubServerEvents = { error: (error: Error) => void };

export interface PubSubServerStats {
  inFlight: number;
  /** The highest number of concurrently running handlers seen. */
  maxObservedInFlight: number;
  received: number;
  acked: number;
  /** Handler failures (each nacked). */
  failed: number;
  /** Acked without processing: unknown messageType, bad JSON, or the handler said invalid. */
  invalid: number;
  rejectedOverCapacity: number;
  rejectedWhileDraining: number;
}

type State = 'idle' | 'starting' | 'running' | 'draining' | 'stopped';

/**
 * NestJS custom transport over the MessageBroker port, so the same app runs on Google Pub/Sub
 * and on the in-memory broker (DESIGN.md §4).
 *
 * Routing: by the `messageType` attribute, to handlers registered with
 * `@EventPattern('<messageType>')` (the transport is one-way; a @MessagePattern handler is
 * called the same way and its reply is discarded). The body is UTF-8 JSON.
 *
 * Settlement — the reason this class exists:
 * - the handler's result is unwrapped whatever its shape (value, Promise, Observable — Nest
 *   wraps every handler in one) and awaited to completion;
 * - success, including a decided no-op (return `noop(reason)`), acks;
 * - ANY error (throw, rejected promise, errored Observable; Nest's exception filters turn
 *   thrown errors into errored Observables) nacks, so Pub/Sub redelivers. Never an ack.
 * - poison messages (no/unknown messageType, unparseable JSON, or a handler returning
 *   `invalidMessage(...)`) are acked with a `message_invalid` line: a decided no-op, because
 *   redelivering them can never succeed and would loop until dead-lettering (which the emulator
 *   does not even do).
 *
 * Bounded work: at most maxInFlight handlers run at once (on top of the broker's own flow
 * control); arrivals beyond that are nacked at once. close() drains: new arrivals are nacked,
 * running handlers get drainTimeoutMs to finish, then the subscriptions are closed.
 *
 * Every delivery runs in withLogContext({ messageId, deliveryAttempt, subscription,
 * messageType, runId, stepId, stepType, traceparent }), and exactly one outcome line is
 * logged per delivery: message_acked | message_invalid | message_handler_failed |
 * message_nacked (not handled: draining or over capacity). message_acked is at debug for a
 * processed message (the handler logged what it did) and at info for a decided no-op.
 */
export class PubSubServer
  extends Server<PubSubServerEvents, PubSubServerStatus>
  implements CustomTransportStrategy
{
  override transportId: symbol = PUBSUB_TRANSPORT;

  private readonly broker: MessageBroker;
  private readonly subscriptionNames: readonly string[];
  private readonly log: Logger;
  private readonly maxInFlight: number;
  private readonly drainTimeoutMs: number;
  private readonly closeTimeoutMs: number;
  private readonly ackDeadlineSeconds: number | undefined;
  private readonly maxLeaseExtensionSeconds: number | undefined;
  private readonly delivery: SubscribeOptions['delivery'];
  private readonly events = new EventEmitter();
  private readonly handles: SubscriptionHandle[] = [];
  private readonly idleWaiters = new Set<() => void>();
  private state: State = 'idle';
  private starting: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private readonly counters: PubSubServerStats = {
    inFlight: 0,
    maxObservedInFlight: 0,
    received: 0,
    acked: 0,
    failed: 0,
    invalid: 0,
    rejectedOverCapacity: 0,
    rejectedWhileDraining: 0,
  };

  constructor(options: PubSubServerOptions) {
    super();
    this.broker = options.broker;
    this.subscriptionNames = [...options.subscriptions];
    this.log = options.logger;
    this.maxInFlight = options.maxInFlight ?? 10;
    this.drainTimeoutMs = options.drainTimeoutMs ?? 8_000;
    this.closeTimeoutMs = options.closeTimeoutMs ?? 5_000;
    this.ackDeadlineSeconds = options.ackDeadlineSeconds;
    this.maxLeaseExtensionSeconds = options.maxLeaseExtensionSeconds;
    this.delivery = options.delivery;
    if (!(this.maxInFlight >= 1)) throw new RangeError('maxInFlight must be >= 1');
  }

  stats(): PubSubServerStats {
    return { ...this.counters };
  }

  listen(callback: (...optionalParams: unknown[]) => unknown): void {
    this.start().then(
      () => callback(),
      (error: unknown) => callback(error),
    );
  }

  /** Subscribes to every configured subscription; listen() calls this for Nest. */
  start(): Promise<void> {
    if (this.state !== 'idle') {
      return Promise.reject(
        new TransportStateError(`PubSubServer cannot start when ${this.state}`),
      );
    }
    this.state = 'starting';
    this.starting = this.subscribeAll();
    return this.starting;
  }

  private async subscribeAll(): Promise<void> {
    try {
      for (const name of this.subscriptionNames) {
        const handle = await this.broker.subscribe(
          name,
          (message) => this.onMessage(name, message),
          {
            maxInFlight: this.maxInFlight,
            ...(this.ackDeadlineSeconds === undefined
              ? {}
              : { ackDeadlineSeconds: this.ackDeadlineSeconds }),
            ...(this.maxLeaseExtensionSeconds === undefined
              ? {}
              : { maxLeaseExtensionSeconds: this.maxLeaseExtensionSeconds }),
            ...(this.delivery === undefined ? {} : { delivery: this.delivery }),
            onError: (error) => this.onSubscriptionError(name, error),
          },
        );
        this.handles.push(handle);
      }
    } catch (error) {
      await Promise.allSettled(this.handles.map((h) => h.close()));
      this.handles.length = 0;
      this.state = 'stopped';
      throw error;
    }
    // close() may have been called while subscribing; it waits for us and then drains.
    if (this.state === 'starting') this.state = 'running';
    this._status$.next('connected');
    logEvent(this.log, 'info', 'transport_started', {
      subscriptions: this.subscriptionNames,
      patterns: [...this.messageHandlers.keys()],
      maxInFlight: this.maxInFlight,
    });
  }

  on<
    EventKey extends keyof PubSubServerEvents = keyof PubSubServerEvents,
    EventCallback extends PubSubServerEvents[EventKey] = PubSubServerEvents[EventKey],
  >(event: EventKey, callback: EventCallback): this {
    this.events.on(event, callback);
    return this;
  }

  /** The broker underneath (Nest's app.unwrap()). */
  unwrap<T>(): T {
    return this.broker as T;
  }

  close(): Promise<void> {
    this.closing ??= this.drainAndStop();
    return this.closing;
  }

  // -- per message ---------------------------------------------------------------------------

  private onMessage(subscription: string, message: ReceivedMessage): void {
    this.counters.received++;
    // 'starting': the first subscriptions deliver while later ones are still being opened.
    if (this.state !== 'running' && this.state !== 'starting') {
      this.counters.rejectedWhileDraining++;
      message.nack();
      this.logUnhandled(subscription, message, 'draining');
      return;
    }
    if (this.counters.inFlight >= this.maxInFlight) {
      this.counters.rejectedOverCapacity++;
      message.nack();
      this.logUnhandled(subscription, message, 'over_capacity');
      return;
    }
    this.counters.inFlight++;
    this.counters.maxObservedInFlight = Math.max(
      this.counters.maxObservedInFlight,
      this.counters.inFlight,
    );
    void this.handle(subscription, message)
      .catch(() => {
        // Only reachable if logging itself failed; settle anyway (a no-op once settled).
        message.nack();
      })
      .finally(() => {
        this.counters.inFlight--;
        if (this.counters.inFlight === 0) {
          for (const wake of this.idleWaiters) wake();
          this.idleWaiters.clear();
        }
      });
  }

  private contextFor(subscription: string, message: ReceivedMessage) {
    const { attributes } = message;
    return {
      subscription,
      messageId: message.id,
      deliveryAttempt: message.deliveryAttempt,
      messageType: attributes['messageType'],
      runId: attributes['runId'],
      stepId: attributes['stepId'],
      stepType: attributes['stepType'],
      traceparent: attributes['traceparent'],
    };
  }

  private logUnhandled(subscription: string, message: ReceivedMessage, reason: string): void {
    withLogContext(this.contextFor(subscription, message), () =>
      logEvent(this.log, 'info', 'message_nacked', { reason }),
    );
  }

  /** Never rejects: every path settles the message exactly once and logs one outcome. */
  private handle(subscription: string, message: ReceivedMessage): Promise<void> {
    return withLogContext(this.contextFor(subscription, message), async () => {
      const startedAt = performance.now();
      const elapsed = (): number => Math.round(performance.now() - startedAt);
      logEvent(this.log, 'debug', 'message_received', {
        bytes: message.data.length,
        publishTime: message.publishTime.toISOString(),
      });

      // An exact map lookup, not Server.getHandlerByPattern(): that JSON-parses the pattern,
      // and the attribute is sender-controlled.
      const messageType = message.attributes['messageType'];
      const handler = messageType === undefined ? undefined : this.messageHandlers.get(messageType);
      if (handler === undefined) {
        this.ackInvalid(message, 'warn', {
          reason: messageType === undefined ? 'missing_message_type' : 'unknown_message_type',
        });
        return;
      }
      let body: unknown;
      try {
        body = JSON.parse(message.data.toString('utf8'));
      } catch {
        this.ackInvalid(message, 'warn', { reason: 'invalid_json' });
        return;
      }

      let result: unknown;
      try {
        const returned: unknown = await handler(body, new PubSubContext([message, subscription]));
        // Nest handlers return a Promise of an Observable (or of a value); unwrap fully and wait
        // for completion, so that an error at any level reaches the catch below.
        result = await lastValueFrom(this.transformToObservable(returned), {
          defaultValue: undefined,
        });
      } catch (error) {
        this.counters.failed++;
        message.nack();
        logEvent(this.log, 'error', 'message_handler_failed', {
          action: 'nack',
          durationMs: elapsed(),
          error: describeError(error),
        });
        return;
      }

      if (isHandlerOutcome(result) && result.outcome === 'invalid') {
        this.ackInvalid(message, 'warn', {
          reason: result.reason,
          ...(result.issues === undefined ? {} : { issues: result.issues }),
          durationMs: elapsed(),
        });
        return;
      }
      this.counters.acked++;
      message.ack();
      const outcome = isHandlerOutcome(result) ? result : undefined;
      // A processed message already has its handler's own info line (step_succeeded,
      // run_advanced, ...): its ack is debug. A decided no-op says why at info (issue 16: two of
      // a step's six info lines were these acks).
      const level = outcome === undefined || outcome.outcome === 'processed' ? 'debug' : 'info';
      logEvent(this.log, level, 'message_acked', {
        outcome: outcome?.outcome ?? 'processed',
        ...(outcome?.outcome === 'noop' ? { reason: outcome.reason } : {}),
        ...(outcome?.outcome === 'processed' && outcome.detail !== undefined
          ? { detail: outcome.detail }
          : {}),
        durationMs: elapsed(),
      });
    });
  }

  private ackInvalid(message: ReceivedMessage, level: LogLevel, fields: Record<string, unknown>) {
    this.counters.invalid++;
    message.ack();
    logEvent(this.log, level, 'message_invalid', { action: 'ack', ...fields });
  }

  private onSubscriptionError(subscription: string, error: Error): void {
    logEvent(this.log, 'error', 'subscription_error', {
      subscription,
      error: describeError(error),
    });
    if (this.events.listenerCount('error') > 0) this.events.emit('error', error);
  }

  // -- shutdown --------------------------------------------------------------------------------

  private waitForIdle(timeoutMs: number): Promise<boolean> {
    if (this.counters.inFlight === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.idleWaiters.delete(wake);
        resolve(false);
      }, timeoutMs);
      this.idleWaiters.add(wake);
    });
  }

  private async drainAndStop(): Promise<void> {
    if (this.state === 'idle') {
      this.state = 'stopped';
      return;
    }
    await this.starting?.catch(() => undefined);
    if (this.state === 'stopped') return;
    this.state = 'draining';
    this._status$.next('draining');
    logEvent(this.log, 'info', 'transport_draining', {
      inFlight: this.counters.inFlight,
      drainTimeoutMs: this.drainTimeoutMs,
    });
    const drained = await this.waitForIdle(this.drainTimeoutMs);
    const closed = await Promise.all(
      this.handles.map((handle) => closeWithin(handle, this.closeTimeoutMs)),
    );
    this.handles.length = 0;
    this.state = 'stopped';
    this._status$.next('disconnected');
    const { inFlight, ...counts } = this.counters;
    logEvent(this.log, drained && closed.every(Boolean) ? 'info' : 'warn', 'transport_stopped', {
      drained,
      // Handlers still running after the drain timeout: their messages will be redelivered.
      abandoned: inFlight,
      subscriptionsClosedInTime: closed.filter(Boolean).length,
      subscriptionsTimedOut: closed.filter((ok) => !ok).length,
      ...counts,
    });
  }
}

async function closeWithin(handle: SubscriptionHandle, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      handle.close().then(
        () => true,
        () => false,
      ),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
