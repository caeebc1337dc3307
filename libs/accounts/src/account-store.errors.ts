import { TdaError, type ValidationIssue } from '@tda/contracts';

/**
 * Errors of every AccountStore adapter (TdaError): a code from the closed ErrorCode enum and
 * small sanitized details (ids, field paths; never cash, sizes or prices).
 */
export class AccountStoreError extends TdaError {}

/** `create` found a document with the same accountId (ids are unique across owners). */
export class AccountAlreadyExistsError extends AccountStoreError {
  constructor(readonly accountId: string) {
    super('CONFLICT', `account '${accountId}' already exists`, { details: { accountId } });
  }
}

/** `update` / `delete` addressed an account that does not exist. */
export class AccountNotFoundError extends AccountStoreError {
  constructor(readonly accountId: string) {
    super('NOT_FOUND', `account '${accountId}' does not exist`, { details: { accountId } });
  }
}

/** The document changed since `expectedVersion` was read: re-read, re-decide, write again. */
export class AccountVersionConflictError extends AccountStoreError {
  constructor(
    readonly accountId: string,
    readonly expectedVersion: string,
  ) {
    super('CONFLICT', `account '${accountId}' changed since version ${expectedVersion}`, {
      details: { accountId, expectedVersion },
      retryable: true,
    });
  }
}

function issueList(issues: readonly ValidationIssue[]): string {
  return issues
    .slice(0, 5)
    .map((i) => `${i.path} ${i.message}`)
    .join('; ');
}

/** An account to write breaks account.schema.json or a rule the schema cannot say. */
export class InvalidAccountError extends AccountStoreError {
  constructor(
    readonly accountId: string | undefined,
    readonly issues: readonly ValidationIssue[],
  ) {
    super(
      'INVALID_REQUEST',
      `account${accountId === undefined ? '' : ` '${accountId}'`} is invalid: ${issueList(issues)}`,
      { details: { ...(accountId === undefined ? {} : { accountId }), issues } },
    );
  }
}

/** A stored document that does not satisfy account.schema.json (our data is broken). */
export class InvalidStoredAccountError extends AccountStoreError {
  constructor(
    readonly accountId: string,
    readonly issues: readonly ValidationIssue[],
  ) {
    super('INTERNAL_ERROR', `stored account '${accountId}' is invalid: ${issueList(issues)}`, {
      details: { accountId, issues: issues.map((i) => ({ path: i.path, keyword: i.keyword })) },
    });
  }
}

/** A list query outside the supported range, or a cursor this store did not produce. */
export class InvalidAccountListQueryError extends AccountStoreError {
  constructor(reason: string, details: Readonly<Record<string, unknown>> = {}) {
    super('INVALID_REQUEST', `invalid account list query: ${reason}`, {
      details: { reason, ...details },
    });
  }
}

/**
 * Firestore did not answer or answered "not now" (UNAVAILABLE, DEADLINE_EXCEEDED,
 * RESOURCE_EXHAUSTED, ABORTED). Retryable; the client's error is only the `cause`.
 */
export class AccountStoreUnavailableError extends AccountStoreError {
  constructor(
    readonly operation: string,
    readonly grpcStatus: string,
    cause: unknown,
  ) {
    super(
      'UPSTREAM_UNAVAILABLE',
      `the account store (Firestore) is unavailable: ${grpcStatus} during ${operation}; retry later`,
      { details: { operation, grpcStatus }, retryable: true, cause },
    );
  }
}
