import { TdaError, type ValidationIssue } from '@tda/contracts';

/**
 * Errors of every ScheduleStore and SignalStore adapter (TdaError): a code from the closed
 * ErrorCode enum and small sanitized details (ids and field paths, never document contents).
 */
export class ScheduleStoreError extends TdaError {}

function issueList(issues: readonly ValidationIssue[]): string {
  return issues
    .slice(0, 5)
    .map((i) => `${i.path} ${i.message}`)
    .join('; ');
}

/** `create` found a document with the same scheduleId. */
export class ScheduleAlreadyExistsError extends ScheduleStoreError {
  constructor(readonly scheduleId: string) {
    super('CONFLICT', `schedule '${scheduleId}' already exists`, { details: { scheduleId } });
  }
}

/** `update` / `delete` addressed a schedule that does not exist. */
export class ScheduleNotFoundError extends ScheduleStoreError {
  constructor(readonly scheduleId: string) {
    super('NOT_FOUND', `schedule '${scheduleId}' does not exist`, { details: { scheduleId } });
  }
}

/** The document changed since `expectedVersion` was read: re-read, re-decide, write again. */
export class ScheduleVersionConflictError extends ScheduleStoreError {
  constructor(
    readonly scheduleId: string,
    readonly expectedVersion: string,
  ) {
    super('CONFLICT', `schedule '${scheduleId}' changed since version ${expectedVersion}`, {
      details: { scheduleId, expectedVersion },
      retryable: true,
    });
  }
}

/** A schedule to write breaks flow_schedule.schema.json or a rule the schema cannot say. */
export class InvalidScheduleError extends ScheduleStoreError {
  constructor(
    readonly scheduleId: string | undefined,
    readonly issues: readonly ValidationIssue[],
  ) {
    super(
      'INVALID_REQUEST',
      `schedule${scheduleId === undefined ? '' : ` '${scheduleId}'`} is invalid: ${issueList(issues)}`,
      { details: { ...(scheduleId === undefined ? {} : { scheduleId }), issues } },
    );
  }
}

/** A stored document that does not satisfy its schema (our data is broken). */
export class InvalidStoredDocumentError extends ScheduleStoreError {
  constructor(
    readonly collection: 'flow_schedules' | 'signals' | 'evaluations',
    readonly id: string,
    readonly issues: readonly ValidationIssue[],
  ) {
    super(
      'INTERNAL_ERROR',
      `stored ${collection} document '${id}' is invalid: ${issueList(issues)}`,
      {
        details: {
          collection,
          id,
          issues: issues.map((i) => ({ path: i.path, keyword: i.keyword })),
        },
      },
    );
  }
}

/** A list query outside the supported range, or a cursor this store did not produce. */
export class InvalidScheduleListQueryError extends ScheduleStoreError {
  constructor(reason: string, details: Readonly<Record<string, unknown>> = {}) {
    super('INVALID_REQUEST', `invalid list query: ${reason}`, { details: { reason, ...details } });
  }
}

/** A signal to write breaks signal.schema.json. */
export class InvalidSignalError extends ScheduleStoreError {
  constructor(
    readonly signalId: string | undefined,
    readonly issues: readonly ValidationIssue[],
  ) {
    super(
      'INVALID_REQUEST',
      `signal${signalId === undefined ? '' : ` '${signalId}'`} is invalid: ${issueList(issues)}`,
      { details: { ...(signalId === undefined ? {} : { signalId }), issues } },
    );
  }
}

/** `markPublished` addressed a signal that does not exist. */
export class SignalNotFoundError extends ScheduleStoreError {
  constructor(readonly signalId: string) {
    super('NOT_FOUND', `signal '${signalId}' does not exist`, { details: { signalId } });
  }
}

/**
 * Firestore did not answer or answered "not now" (UNAVAILABLE, DEADLINE_EXCEEDED,
 * RESOURCE_EXHAUSTED, ABORTED). Retryable; the client's error is only the `cause`.
 */
export class ScheduleStoreUnavailableError extends ScheduleStoreError {
  constructor(
    readonly operation: string,
    readonly grpcStatus: string,
    cause: unknown,
    store: 'schedule' | 'signal' | 'evaluation' = 'schedule',
  ) {
    super(
      'UPSTREAM_UNAVAILABLE',
      `the ${store} store (Firestore) is unavailable: ${grpcStatus} during ${operation}; retry later`,
      { details: { operation, grpcStatus }, retryable: true, cause },
    );
  }
}
