import { TdaError, type ValidationIssue } from '@tda/contracts';

/**
 * Errors raised by every FlowRunStore adapter (TdaError): a `code` from the contracts' ErrorCode
 * enum so services can map it to an HTTP status or a step error without knowing the adapter, and
 * small, sanitized `details` (ids and validation issues, never document contents).
 */
export class FlowStoreError extends TdaError {}

/** `create` found a document with the same runId (create-only semantics). */
export class RunAlreadyExistsError extends FlowStoreError {
  constructor(readonly runId: string) {
    super('CONFLICT', `flow run '${runId}' already exists`, { details: { runId } });
  }
}

/** `update` addressed a run that does not exist. */
export class RunNotFoundError extends FlowStoreError {
  constructor(readonly runId: string) {
    super('NOT_FOUND', `flow run '${runId}' does not exist`, { details: { runId } });
  }
}

/**
 * The document changed since `expectedVersion` was read, so the conditional update was not
 * applied. Retryable: re-read, re-decide and write again (see updateWithRetry).
 */
export class VersionConflictError extends FlowStoreError {
  constructor(
    readonly runId: string,
    readonly expectedVersion: string,
  ) {
    super('CONFLICT', `flow run '${runId}' changed since version ${expectedVersion}`, {
      details: { runId, expectedVersion },
      retryable: true,
    });
  }
}

/** The document to create, or a document read back, does not satisfy flow_run.schema.json. */
export class InvalidRunDocumentError extends FlowStoreError {
  constructor(
    readonly runId: string | undefined,
    readonly issues: readonly ValidationIssue[],
  ) {
    super(
      'FLOW_RUN_INVALID',
      `flow run${runId === undefined ? '' : ` '${runId}'`} is invalid: ${issues
        .slice(0, 5)
        .map((i) => `${i.path} ${i.message}`)
        .join('; ')}`,
      { details: { ...(runId === undefined ? {} : { runId }), issues } },
    );
  }
}

/**
 * A patch the store cannot apply identically on every backend: empty or reserved path segments,
 * one path being a prefix of another, or a value that is not plain JSON (Date, nested array,
 * NaN, a FIELD_DELETE below the top level, ...).
 */
export class InvalidRunPatchError extends FlowStoreError {
  constructor(
    readonly runId: string,
    readonly issues: readonly ValidationIssue[],
  ) {
    super(
      'INVALID_REQUEST',
      `patch for flow run '${runId}' is invalid: ${issues
        .slice(0, 5)
        .map((i) => `${i.path} ${i.message}`)
        .join('; ')}`,
      { details: { runId, issues } },
    );
  }
}

/** A list query outside the supported range (limit 1..100, ...). */
export class InvalidListQueryError extends FlowStoreError {
  constructor(message: string, details: Readonly<Record<string, unknown>> = {}) {
    super('INVALID_REQUEST', message, { details });
  }
}

/** The cursor was not produced by this store (or by an incompatible version of it). */
export class InvalidCursorError extends InvalidListQueryError {
  constructor(reason: string) {
    super(`invalid list cursor: ${reason}`, { reason });
  }
}

/**
 * Firestore did not answer, or answered "not now" (a transient gRPC status: unavailable,
 * deadline exceeded, resource exhausted, aborted). Retryable: the API answers 502, a message
 * handler nacks and Pub/Sub redelivers. The client's own error is the `cause` (for the logs), not
 * part of the message: it may name backend internals.
 */
export class StoreUnavailableError extends FlowStoreError {
  constructor(
    readonly operation: string,
    readonly grpcStatus: string,
    cause: unknown,
  ) {
    super(
      'UPSTREAM_UNAVAILABLE',
      `the run store (Firestore) is unavailable: ${grpcStatus} during ${operation}; retry later`,
      { details: { operation, grpcStatus }, retryable: true, cause },
    );
  }
}

/**
 * updateWithRetry lost the race `attempts` times in a row. Retryable at the message level: the
 * caller nacks and Pub/Sub redelivers later (DESIGN.md §3).
 */
export class ConflictRetriesExhaustedError extends FlowStoreError {
  constructor(
    readonly runId: string,
    readonly attempts: number,
  ) {
    super(
      'CONFLICT',
      `flow run '${runId}': conditional update still conflicting after ${attempts} attempts`,
      { details: { runId, attempts }, retryable: true },
    );
  }
}
