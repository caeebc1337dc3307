import 'reflect-metadata';
import { Controller, Inject, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ctx, EventPattern, Payload, type MicroserviceOptions } from '@nestjs/microservices';
import type { INestMicroservice } from '@nestjs/common';
import { createMemoryLogger, logEvent, type Logger, type MemoryLogger } from '@tda/observability';
import { expectEventually, uniqueName } from '@tda/test-support';
import { delay, mergeMap, Observable, of, throwError, timer } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MessageBroker, SubscribeOptions } from './broker.port';
import { BrokerPublisher } from './broker-publisher';
import { noop, invalidMessage, processed, type HandlerOutcome } from './handler-outcome';
import { InMemoryBroker } from './in-memory-broker.adapter';
import { PubSubContext } from './pubsub.context';
import { PubSubServer } from './pubsub.server';
import { RethrowRpcExceptionFilter } from './rethrow-rpc-exception.filter';
import { buildTopology, stepReadySubscription, stepReadyTopic } from './topology';

/** What the test controller records; shared with the test through DI. */
class Probe {
  calls: { pattern: string; attempt: number; messageId: string }[] = [];
  running = 0;
  maxRunning = 0;
  private gate: Promise<void> = Promise.resolve();
  private openGate: () => void = () => undefined;

  constructor(readonly logger: Logger) {}

  closeGate(): void {
    this.gate = new Promise((resolve) => {
      this.openGate = resolve;
    });
  }
  release(): void {
    this.openGate();
  }
  waitAtGate(): Promise<void> {
    return this.gate;
  }
  record(pattern: string, ctx: PubSubContext): number {
    const attempt = ctx.getDeliveryAttempt();
    this.calls.push({ pattern, attempt, messageId: ctx.getMessageId() });
    return attempt;
  }
  attemptsOf(pattern: string): number[] {
    return this.calls.filter((c) => c.pattern === pattern).map((c) => c.attempt);
  }
}

const PROBE = Symbol('probe');

interface Body {
  failUntil?: number;
}

@Controller()
class TestController {
  constructor(@Inject(PROBE) private readonly probe: Probe) {}

  @EventPattern('sync_throw')
  syncThrow(@Payload() body: Body, @Ctx() ctx: PubSubContext): HandlerOutcome {
    const attempt = this.probe.record('sync_throw', ctx);
    if (attempt < (body.failUntil ?? 0)) throw new Error('boom: sync');
    return processed('recovered');
  }

  @EventPattern('async_reject')
  async asyncReject(@Payload() body: Body, @Ctx() ctx: PubSubContext): Promise<HandlerOutcome> {
    const attempt = this.probe.record('async_reject', ctx);
    await new Promise((resolve) => setTimeout(resolve, 2));
    if (attempt < (body.failUntil ?? 0)) throw new Error('boom: async');
    return processed();
  }

  @EventPattern('observable_error')
  observableError(@Payload() body: Body, @Ctx() ctx: PubSubContext): Observable<HandlerOutcome> {
    const attempt = this.probe.record('observable_error', ctx);
    // Errors only after a delay, i.e. after Nest has already returned the Observable.
    return timer(3).pipe(
      mergeMap(() =>
        attempt < (body.failUntil ?? 0)
          ? throwError(() => new Error('boom: observable'))
          : of(processed()),
      ),
    );
  }

  @EventPattern('observable_noop')
  observableNoop(@Ctx() ctx: PubSubContext): Observable<HandlerOutcome> {
    this.probe.record('observable_noop', ctx);
    return of(noop('step already SUCCEEDED')).pipe(delay(2));
  }

  @EventPattern('plain')
  plain(@Ctx() ctx: PubSubContext): void {
    this.probe.record('plain', ctx);
    logEvent(this.probe.logger, 'info', 'step_claimed', { from: 'handler' });
  }

  @EventPattern('invalid_body')
  invalidBody(@Ctx() ctx: PubSubContext): HandlerOutcome {
    this.probe.record('invalid_body', ctx);
    return invalidMessage('schema', [{ path: '/runId', message: 'required' }]);
  }

  @EventPattern('slow')
  async slow(@Ctx() ctx: PubSubContext): Promise<void> {
    this.probe.record('slow', ctx);
    this.probe.running++;
    this.probe.maxRunning = Math.max(this.probe.maxRunning, this.probe.running);
    try {
      await this.probe.waitAtGate();
    } finally {
      this.probe.running--;
    }
  }
}

function moduleWith(probe: Probe) {
  @Module({ controllers: [TestController], providers: [{ provide: PROBE, useValue: probe }] })
  class TestModule {}
  return TestModule;
}

describe('PubSubServer on the in-memory broker (Nest microservice)', () => {
  let broker: InMemoryBroker;
  let logs: MemoryLogger;
  let probe: Probe;
  let app: INestMicroservice | undefined;
  let server: PubSubServer;
  let prefix: string;
  let publisher: BrokerPublisher;

  beforeEach(() => {
    broker = new InMemoryBroker({ timeScale: 0.01 });
    prefix = uniqueName('srv');
    broker.applyTopology(
      buildTopology({
        prefix,
        stepTypes: ['LLM_REPORT', 'CHART_EXPORT'],
        // 1 s of backoff = 10 ms here
        subscriptionDefaults: { minimumBackoffSeconds: 1, maximumBackoffSeconds: 1 },
      }),
    );
    logs = createMemoryLogger({ service: 'test', level: 'debug', projectId: 'p' });
    probe = new Probe(logs.logger);
    publisher = new BrokerPublisher({ publisher: broker, prefix });
  });

  afterEach(async () => {
    probe.release();
    await app?.close();
    app = undefined;
    await broker.close();
  });

  async function start(
    options: { maxInFlight?: number; drainTimeoutMs?: number; rethrow?: boolean } = {},
  ): Promise<void> {
    server = new PubSubServer({
      broker,
      subscriptions: [
        stepReadySubscription('LLM_REPORT', prefix),
        stepReadySubscription('CHART_EXPORT', prefix),
      ],
      logger: logs.logger,
      maxInFlight: options.maxInFlight ?? 10,
      drainTimeoutMs: options.drainTimeoutMs ?? 2_000,
      closeTimeoutMs: 1_000,
    });
    app = await NestFactory.createMicroservice<MicroserviceOptions>(moduleWith(probe), {
      strategy: server,
      logger: false,
    });
    if (options.rethrow === true) app.useGlobalFilters(new RethrowRpcExceptionFilter());
    await app.listen();
  }

  const topic = (): string => stepReadyTopic('LLM_REPORT', prefix);
  const send = (messageType: string, body: object = {}, attributes: Record<string, string> = {}) =>
    publisher.publishJson(topic(), body, { messageType, ...attributes });
  const acked = () => logs.withEvent('message_acked');
  const failed = () => logs.withEvent('message_handler_failed');

  for (const pattern of ['sync_throw', 'async_reject', 'observable_error'] as const) {
    it(`nacks when a ${pattern} handler fails, and acks the redelivery that succeeds`, async () => {
      await start();
      const id = await send(pattern, { failUntil: 3 });
      await expectEventually(() => expect(acked()).toHaveLength(1));
      expect(probe.attemptsOf(pattern)).toEqual([1, 2, 3]);
      expect(failed()).toHaveLength(2);
      expect(failed().map((r) => r['action'])).toEqual(['nack', 'nack']);
      expect(failed()[0]).toMatchObject({ severity: 'ERROR', messageId: id, deliveryAttempt: 1 });
      // The handler's own line says what it did: the ack of a processed message is debug.
      expect(acked()[0]).toMatchObject({
        messageId: id,
        deliveryAttempt: 3,
        outcome: 'processed',
        severity: 'DEBUG',
      });
      expect(server.stats()).toMatchObject({ acked: 1, failed: 2, invalid: 0 });
    });
  }

  it('keeps nacking a handler that always fails (never swallowed into an ack)', async () => {
    await start();
    await send('sync_throw', { failUntil: 1_000 });
    await expectEventually(() => expect(failed().length).toBeGreaterThanOrEqual(4));
    expect(acked()).toHaveLength(0);
    expect(broker.stats(stepReadySubscription('LLM_REPORT', prefix)).acked).toBe(0);
  });

  it('logs the original error when RethrowRpcExceptionFilter is registered', async () => {
    await start({ rethrow: true });
    await send('sync_throw', { failUntil: 2 });
    await expectEventually(() => expect(acked()).toHaveLength(1));
    expect(failed()[0]?.['error']).toMatchObject({ name: 'Error', message: 'boom: sync' });
  });

  it('acks a decided no-op from an Observable and says so in the log', async () => {
    await start();
    await send('observable_noop');
    await expectEventually(() => expect(acked()).toHaveLength(1));
    expect(acked()[0]).toMatchObject({
      outcome: 'noop',
      reason: 'step already SUCCEEDED',
      severity: 'INFO',
    });
    expect(probe.attemptsOf('observable_noop')).toEqual([1]);
  });

  it('runs the handler inside the message log context (ids, attempt, trace)', async () => {
    await start();
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const id = await send('plain', {}, { runId: 'r-1', stepId: 'LLM_REPORT:1d', traceparent });
    await expectEventually(() => expect(acked()).toHaveLength(1));
    const fromHandler = logs.withEvent('step_claimed')[0];
    expect(fromHandler).toMatchObject({
      from: 'handler',
      messageId: id,
      deliveryAttempt: 1,
      runId: 'r-1',
      stepId: 'LLM_REPORT:1d',
      messageType: 'plain',
      subscription: stepReadySubscription('LLM_REPORT', prefix),
      'logging.googleapis.com/trace': 'projects/p/traces/4bf92f3577b34da6a3ce929d0e0e4736',
    });
    expect(acked()[0]).toMatchObject({ outcome: 'processed', runId: 'r-1' });
  });

  it('acks poison messages with message_invalid: bad JSON, unknown or missing type, handler verdict', async () => {
    await start();
    await broker.publish(topic(), {
      data: Buffer.from('{not json'),
      attributes: { messageType: 'plain' },
    });
    await broker.publish(topic(), { data: {}, attributes: { messageType: 'no_such_type' } });
    await broker.publish(topic(), { data: {} });
    await send('invalid_body');
    await expectEventually(() => expect(logs.withEvent('message_invalid')).toHaveLength(4));
    const reasons = logs.withEvent('message_invalid').map((r) => r['reason']);
    expect(reasons.sort()).toEqual(
      ['invalid_json', 'missing_message_type', 'schema', 'unknown_message_type'].sort(),
    );
    for (const line of logs.withEvent('message_invalid')) {
      expect(line).toMatchObject({ severity: 'WARNING', action: 'ack' });
    }
    // acked: nothing is redelivered, and the broken ones never reached a handler
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(broker.stats(stepReadySubscription('LLM_REPORT', prefix))).toMatchObject({
      acked: 4,
      deliveries: 4,
    });
    expect(probe.calls.map((c) => c.pattern)).toEqual(['invalid_body']);
    expect(server.stats()).toMatchObject({ invalid: 4, acked: 0, failed: 0 });
  });

  it('never runs more than maxInFlight handlers at once across subscriptions', async () => {
    await start({ maxInFlight: 2 });
    probe.closeGate();
    // Broker flow control alone would allow 2 per subscription = 4; the server caps the total.
    for (let n = 0; n < 3; n++) {
      await send('slow', { n });
      await publisher.publishJson(
        stepReadyTopic('CHART_EXPORT', prefix),
        { n },
        { messageType: 'slow' },
      );
    }
    await expectEventually(() => expect(server.stats().rejectedOverCapacity).toBeGreaterThan(0));
    expect(probe.running).toBe(2);
    probe.release();
    await expectEventually(() => expect(acked()).toHaveLength(6));
    expect(probe.maxRunning).toBe(2);
    expect(server.stats().maxObservedInFlight).toBe(2);
    expect(logs.withEvent('message_nacked')[0]).toMatchObject({ reason: 'over_capacity' });
  });

  it('drains on close: waits for running handlers, starts no new ones, then stops', async () => {
    await start();
    probe.closeGate();
    const first = await send('slow');
    await expectEventually(() => expect(probe.running).toBe(1));
    const closing = app?.close();
    app = undefined;
    await expectEventually(() => expect(logs.withEvent('transport_draining')).toHaveLength(1));
    await send('slow');
    await expectEventually(() => expect(server.stats().rejectedWhileDraining).toBeGreaterThan(0));
    expect(probe.calls.filter((c) => c.pattern === 'slow')).toHaveLength(1);
    let closed = false;
    void closing?.then(() => {
      closed = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closed).toBe(false); // still waiting for the running handler
    probe.release();
    await closing;
    expect(acked().map((r) => r['messageId'])).toEqual([first]);
    expect(logs.withEvent('transport_draining')[0]).toMatchObject({ inFlight: 1 });
    expect(logs.withEvent('transport_stopped')[0]).toMatchObject({
      severity: 'INFO',
      drained: true,
      abandoned: 0,
    });
    expect(probe.calls.filter((c) => c.pattern === 'slow')).toHaveLength(1);
  });

  it('gives up waiting after drainTimeoutMs and reports the abandoned handler', async () => {
    await start({ drainTimeoutMs: 100 });
    probe.closeGate();
    await send('slow');
    await expectEventually(() => expect(probe.running).toBe(1));
    const startedAt = Date.now();
    await app?.close();
    app = undefined;
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(95);
    expect(logs.withEvent('transport_stopped')[0]).toMatchObject({
      severity: 'WARNING',
      drained: false,
      abandoned: 1,
    });
  });

  it('fails listen() when a subscription does not exist', async () => {
    server = new PubSubServer({ broker, subscriptions: ['missing-sub'], logger: logs.logger });
    await expect(server.start()).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe('PubSubServer subscribe options', () => {
  it('passes the delivery mode and the flow control to every subscription', async () => {
    const seen: SubscribeOptions[] = [];
    const broker = new InMemoryBroker();
    broker.applyTopology(buildTopology({ prefix: 'opt' }));
    const recording: MessageBroker = {
      publish: (topic, message) => broker.publish(topic, message),
      subscribe: (name, onMessage, options) => {
        seen.push(options);
        return broker.subscribe(name, onMessage, options);
      },
      seek: (name, time) => broker.seek(name, time),
      close: () => broker.close(),
    };
    const server = new PubSubServer({
      broker: recording,
      subscriptions: [stepReadySubscription('BACKTEST', 'opt')],
      logger: createMemoryLogger({ service: 'opt' }).logger,
      maxInFlight: 1,
      delivery: 'on-demand',
    });
    await server.start();
    await server.close();
    await broker.close();
    expect(seen).toEqual([expect.objectContaining({ maxInFlight: 1, delivery: 'on-demand' })]);
  });
});
