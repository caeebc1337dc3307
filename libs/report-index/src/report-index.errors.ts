import { TdaError, type ValidationIssue } from '@tda/contracts';
import { InvalidRequestError } from '@tda/flow-engine';

/**
 * Errors of every ReportIndexStore adapter (TdaError): a contract `code`, so the API maps them to
 * a status and a message handler to ack/nack without knowing the adapter; `details` name ids and
 * schema paths, never document contents.
 */
export class ReportIndexError extends TdaError {}

/** A list query outside the supported range (limit, symbolKey, timeframe, asOf, minStrength). */
export class InvalidIndexQueryError extends InvalidRequestError {}

/** The cursor was not produced by this list (another list's, tampered with, or an old version). */
export class InvalidIndexCursorError extends InvalidIndexQueryError {
  constructor(reason: string) {
    super(`invalid list cursor: ${reason}`, { parameter: 'cursor', reason });
  }
}

/**
 * An entry to create (or one read back) breaks its contract: a bug of the writer or a foreign
 * document, never fixed by trying again. Names schema paths and keywords only: a validator's
 * message may quote a value, and entries carry model text (the headline).
 */
export class InvalidIndexEntryError extends ReportIndexError {
  constructor(
    readonly kind: 'report' | 'recommendation',
    readonly id: string | undefined,
    readonly issues: readonly ValidationIssue[],
  ) {
    super(
      'INTERNAL_ERROR',
      `${kind} index entry${id === undefined ? '' : ` '${id}'`} is invalid: ${issues
        .slice(0, 5)
        .map((i) => `${i.path || '/'} (${i.keyword})`)
        .join('; ')}`,
      {
        details: {
          kind,
          ...(id === undefined ? {} : { id }),
          issues: issues.slice(0, 5).map((i) => ({ path: i.path, keyword: i.keyword })),
        },
        retryable: false,
      },
    );
  }
}

/**
 * Firestore did not answer or answered "not now" (unavailable, deadline exceeded, resource
 * exhausted, aborted). Retryable: the API answers 502, a message handler nacks.
 */
export class IndexStoreUnavailableError extends ReportIndexError {
  constructor(
    readonly operation: string,
    readonly grpcStatus: string,
    cause: unknown,
  ) {
    super(
      'UPSTREAM_UNAVAILABLE',
      `the report index (Firestore) is unavailable: ${grpcStatus} during ${operation}; retry later`,
      { details: { operation, grpcStatus }, retryable: true, cause },
    );
  }
}
