import 'reflect-metadata';
import { PubSub } from '@google-cloud/pubsub';
import { Controller, Inject, Module, type INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ctx, EventPattern, Payload, type MicroserviceOptions } from '@nestjs/microservices';
import { createMemoryLogger } from '@tda/observability';
import { emulatorEndpoints, expectEventually, uniqueName } from '@tda/test-support';
import { mergeMap, throwError, timer, type Observable } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { BrokerPublisher } from './broker-publisher';
import { GooglePubSubBroker } from './google-pubsub-broker.adapter';
import { noop, processed, type HandlerOutcome } from './handler-outcome';
import { PubSubContext } from './pubsub.context';
import { PubSubServer } from './pubsub.server';
import { applyTopology, buildTopology, stepReadySubscription, stepReadyTopic } from './topology';

const ATTEMPTS = Symbol('attempts');

@Controller()
class StepReadyController {
  constructor(@Inject(ATTEMPTS) private readonly attempts: number[]) {}

  // Fails twice in three different ways, then reports a no-op.
  @EventPattern('step_ready')
  handle(
    @Payload() body: { runId: string },
    @Ctx() ctx: PubSubContext,
  ): Observable<HandlerOutcome> | Promise<HandlerOutcome> {
    const attempt = ctx.getDeliveryAttempt();
    this.attempts.push(attempt);
    if (attempt === 1) throw new Error('first attempt fails synchronously');
    if (attempt === 2) {
      return timer(5).pipe(
        mergeMap(() => throwError(() => new Error('second fails in the stream'))),
      );
    }
    return Promise.resolve(body.runId === 'done' ? noop('already finished') : processed());
  }
}

describe('PubSubServer on the Pub/Sub emulator', () => {
  let app: INestMicroservice | undefined;
  let pubsub: PubSub | undefined;

  afterEach(async () => {
    await app?.close();
    await pubsub?.close();
  });

  it('nacks failures (sync throw, errored Observable) until the handler succeeds, acks poison', async () => {
    const { pubsubHost, projectId } = emulatorEndpoints();
    pubsub = new PubSub({ projectId, apiEndpoint: pubsubHost, emulatorMode: true });
    const prefix = uniqueName('srv');
    await applyTopology(
      pubsub,
      buildTopology({
        prefix,
        stepTypes: ['LLM_REPORT'],
        subscriptionDefaults: { minimumBackoffSeconds: 1, maximumBackoffSeconds: 2 },
      }),
    );
    const broker = new GooglePubSubBroker({ pubsub, closeTimeoutMs: 2_000 });
    const logs = createMemoryLogger({ service: 'test', level: 'debug' });
    const attempts: number[] = [];

    @Module({
      controllers: [StepReadyController],
      providers: [{ provide: ATTEMPTS, useValue: attempts }],
    })
    class TestModule {}

    app = await NestFactory.createMicroservice<MicroserviceOptions>(TestModule, {
      strategy: new PubSubServer({
        broker,
        subscriptions: [stepReadySubscription('LLM_REPORT', prefix)],
        logger: logs.logger,
        maxInFlight: 4,
        drainTimeoutMs: 2_000,
      }),
      logger: false,
    });
    await app.listen();

    const publisher = new BrokerPublisher({ publisher: broker, prefix });
    const id = await publisher.publishJson(
      stepReadyTopic('LLM_REPORT', prefix),
      { runId: 'done' },
      { messageType: 'step_ready', runId: 'done' },
    );
    await broker.publish(stepReadyTopic('LLM_REPORT', prefix), {
      data: Buffer.from('not json'),
      attributes: { messageType: 'step_ready' },
    });

    await expectEventually(() => expect(logs.withEvent('message_acked')).toHaveLength(1), {
      timeoutMs: 30_000,
    });
    expect(attempts).toEqual([1, 2, 3]);
    expect(logs.withEvent('message_handler_failed').map((r) => r['deliveryAttempt'])).toEqual([
      1, 2,
    ]);
    expect(logs.withEvent('message_acked')[0]).toMatchObject({
      messageId: id,
      outcome: 'noop',
      reason: 'already finished',
      deliveryAttempt: 3,
    });
    await expectEventually(() => expect(logs.withEvent('message_invalid')).toHaveLength(1));
    expect(logs.withEvent('message_invalid')[0]).toMatchObject({ reason: 'invalid_json' });

    await app.close();
    app = undefined;
    expect(logs.withEvent('transport_stopped')[0]).toMatchObject({ drained: true, abandoned: 0 });
    // Nothing comes back after the acks: the poison message was not redelivered.
    expect(logs.withEvent('message_invalid')).toHaveLength(1);
  });
});
