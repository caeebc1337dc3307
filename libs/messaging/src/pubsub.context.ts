import { BaseRpcContext } from '@nestjs/microservices';
import type { MessageAttributes, ReceivedMessage } from './broker.port';

type PubSubContextArgs = [message: ReceivedMessage, subscription: string];

/**
 * What a handler gets with `@Ctx()`: the delivery being handled. Handlers must not ack/nack
 * themselves (the transport does it from the handler's outcome); the message is exposed for
 * its id, attributes and delivery attempt.
 */
export class PubSubContext extends BaseRpcContext<PubSubContextArgs> {
  constructor(args: PubSubContextArgs) {
    super(args);
  }

  getMessage(): ReceivedMessage {
    return this.args[0];
  }

  getSubscription(): string {
    return this.args[1];
  }

  getMessageId(): string {
    return this.args[0].id;
  }

  /** 1-based; enforce max attempts from this (or step.attempt), not from dead-lettering. */
  getDeliveryAttempt(): number {
    return this.args[0].deliveryAttempt;
  }

  getAttributes(): MessageAttributes {
    return this.args[0].attributes;
  }
}
