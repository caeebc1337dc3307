import { TdaError } from '@tda/contracts';

/** The identity store failed transiently (Firestore unavailable): retryable, a 502 at the edge. */
export class IdentityStoreUnavailableError extends TdaError {
  constructor(operation: string, status: string, cause: unknown) {
    super('UPSTREAM_UNAVAILABLE', `identity store ${operation} failed: ${status}`, {
      details: { operation, status },
      retryable: true,
      cause,
    });
  }
}

/** A token with this hash already exists (never for random tokens; a bug or a replayed seed). */
export class ApiTokenExistsError extends TdaError {
  constructor(tokenId: string) {
    super('CONFLICT', `API token ${tokenId} already exists`, { details: { tokenId } });
  }
}
