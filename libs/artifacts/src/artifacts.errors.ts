import { TdaError } from '@tda/contracts';

/**
 * Errors raised by every ArtifactStore adapter (TdaError): a `code` from the contracts' ErrorCode
 * enum so a worker can turn it into a step error (or a service into an HTTP status) without
 * knowing which backend produced it. `details` holds only URIs, hashes, sizes and status codes —
 * never object contents or backend response bodies.
 */
export class ArtifactStoreError extends TdaError {}

/** A request the store refuses before touching storage (bad option values). */
export class InvalidArtifactRequestError extends ArtifactStoreError {
  constructor(message: string, details: Readonly<Record<string, unknown>> = {}) {
    super('INVALID_REQUEST', message, { details });
  }
}

/** Not a `gs://<bucket>/<path>` URI this project accepts (see parseGcsUri). */
export class InvalidArtifactUriError extends InvalidArtifactRequestError {
  constructor(
    readonly uri: string,
    readonly reason: string,
  ) {
    // The uri is cut so that a huge or hostile value cannot bloat logs or error documents.
    super(`invalid artifact uri ${JSON.stringify(truncate(uri, 200))}: ${reason}`, {
      uri: truncate(uri, 200),
      reason,
    });
  }
}

/** read/signedUrl of an object that does not exist. */
export class ArtifactNotFoundError extends ArtifactStoreError {
  constructor(readonly uri: string) {
    super('NOT_FOUND', `artifact ${uri} does not exist`, { details: { uri } });
  }
}

/**
 * A create-only put found DIFFERENT bytes under the uri. Never retryable: deterministic names
 * promise identical bytes for identical inputs, so this is a determinism bug or a naming
 * collision that a retry cannot fix. `reason` is 'different-bytes' normally, or 'path-shape'
 * when the local adapter cannot hold the name at all (an object exists where a directory would
 * be needed, or vice versa).
 */
export class ArtifactConflictError extends ArtifactStoreError {
  constructor(
    readonly uri: string,
    details: {
      reason: 'different-bytes' | 'path-shape';
      attemptedSha256: string;
      existingSha256?: string;
    },
  ) {
    super(
      'CONFLICT',
      details.reason === 'different-bytes'
        ? `artifact ${uri} already exists with different bytes (create-only)`
        : `artifact ${uri} cannot be created: the name collides with an existing object path`,
      { details: { uri, ...details }, retryable: false },
    );
  }
}

/**
 * Storage failed while writing (network, 5xx, permission, disk full...). Retryable: a retried
 * step writes the same bytes to the same name, which create-only semantics make safe.
 */
export class ArtifactWriteError extends ArtifactStoreError {
  constructor(
    readonly uri: string,
    reason: string,
    details: Readonly<Record<string, unknown>> = {},
  ) {
    super('GCS_WRITE_FAILED', `writing artifact ${uri} failed: ${reason}`, {
      details: { uri, ...details },
    });
  }
}

/** Storage failed while reading, checking existence or signing. Retryable. */
export class ArtifactReadError extends ArtifactStoreError {
  constructor(
    readonly uri: string,
    reason: string,
    details: Readonly<Record<string, unknown>> = {},
  ) {
    super('UPSTREAM_UNAVAILABLE', `reading artifact ${uri} failed: ${reason}`, {
      details: { uri, ...details },
    });
  }
}

/**
 * A signed URL could not be produced: usually the identity cannot sign (no service-account key
 * and no iam.serviceAccounts.signBlob permission). A configuration problem, so not retryable.
 */
export class ArtifactSigningError extends ArtifactStoreError {
  constructor(
    readonly uri: string,
    reason: string,
  ) {
    super('INTERNAL_ERROR', `signing a url for artifact ${uri} failed: ${reason}`, {
      details: { uri, reason },
    });
  }
}

function truncate(value: string, max: number): string {
  return value.length > max ? `${value.slice(0, max)}…` : value;
}
