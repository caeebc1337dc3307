import { TdaError } from '@tda/contracts';

/** The messaging error family (TdaError: a contracts ErrorCode, retryable, details, cause). */
export class MessagingError extends TdaError {}

export class TopicNotFoundError extends MessagingError {
  constructor(readonly topic: string) {
    super('NOT_FOUND', `topic ${topic} does not exist`, { details: { topic } });
  }
}

export class SubscriptionNotFoundError extends MessagingError {
  constructor(
    readonly subscription: string,
    options?: { cause?: unknown },
  ) {
    super('NOT_FOUND', `subscription ${subscription} does not exist`, {
      ...options,
      details: { subscription },
    });
  }
}

export class SnapshotNotFoundError extends MessagingError {
  constructor(
    readonly snapshot: string,
    options?: { cause?: unknown },
  ) {
    super('NOT_FOUND', `snapshot ${snapshot} does not exist`, {
      ...options,
      details: { snapshot },
    });
  }
}

/** A snapshot name Pub/Sub would refuse (SNAPSHOT_NAME_PATTERN). */
export class InvalidSnapshotNameError extends MessagingError {
  constructor(readonly snapshot: string) {
    super(
      'INVALID_REQUEST',
      `invalid snapshot name '${snapshot.slice(0, 100)}': 3-255 characters, a letter first, then letters, digits or -_.~+%, not starting with goog`,
    );
  }
}

export class SnapshotAlreadyExistsError extends MessagingError {
  constructor(
    readonly snapshot: string,
    options?: { cause?: unknown },
  ) {
    super('CONFLICT', `snapshot ${snapshot} already exists`, { ...options, details: { snapshot } });
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
