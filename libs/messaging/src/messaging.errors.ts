import type { ErrorCode } from '@tda/contracts';

/** Base of the messaging error family; `code` is from the contracts ErrorCode enum. */
export class MessagingError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

export class TopicNotFoundError extends MessagingError {
  constructor(readonly topic: string) {
    super('NOT_FOUND', `topic ${topic} does not exist`);
  }
}

export class SubscriptionNotFoundError extends MessagingError {
  constructor(
    readonly subscription: string,
    options?: { cause?: unknown },
  ) {
    super('NOT_FOUND', `subscription ${subscription} does not exist`, options);
  }
}

/** A topology that cannot be expressed or reached by updating settings in place. */
export class TopologyError extends MessagingError {
  constructor(message: string) {
    super('CONFLICT', message);
  }
}

/** Raised by PubSubServer when it is started twice or used after close. */
export class TransportStateError extends MessagingError {
  constructor(message: string) {
    super('INTERNAL_ERROR', message);
  }
}
