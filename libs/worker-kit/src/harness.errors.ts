import { TdaError } from '@tda/contracts';

/**
 * A transient failure of the harness's own infrastructure. Thrown out of handleStepReady so the
 * transport NACKS and Pub/Sub redelivers; never written to the step (the step is not at fault).
 */
export class HarnessTransientError extends TdaError {}

/** An artifact put kept failing with a retryable error after the local retries. */
export class ArtifactWriteRetryableError extends HarnessTransientError {
  constructor(uri: string, tries: number, cause: unknown) {
    super('GCS_WRITE_FAILED', `artifact write still failing after ${tries} tries`, {
      details: { uri, tries },
      retryable: true,
      cause,
    });
  }
}

/**
 * The harness is shutting down: new deliveries are refused and running handlers are aborted
 * without writing anything; the message is redelivered (elsewhere) and the lease expires.
 */
export class HarnessShutdownError extends HarnessTransientError {
  constructor() {
    super('UPSTREAM_UNAVAILABLE', 'worker is shutting down', { retryable: true });
  }
}
