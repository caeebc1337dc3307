import { TdaError, type ErrorCode } from '@tda/contracts';

/**
 * Errors the orchestrator raises itself (TdaError; the flow-engine and flow-store families cover
 * the rest). Each fixes its contract `code`, so the exception filter derives the HTTP status from
 * ERROR_CODE_INFO and never has to guess. The constructor is (message, details).
 */
export abstract class OrchestratorError extends TdaError {
  protected constructor(
    code: ErrorCode,
    message: string,
    details: Readonly<Record<string, unknown>> = {},
    retryable?: boolean,
  ) {
    super(code, message, { details, ...(retryable === undefined ? {} : { retryable }) });
  }
}

/** Missing or wrong bearer token. */
export class UnauthenticatedError extends OrchestratorError {
  constructor(message: string, details: Readonly<Record<string, unknown>> = {}) {
    super('UNAUTHENTICATED', message, details);
  }
}

/** Authenticated, but the role does not allow it (admin routes, X-TDA-Owner for a user). */
export class ForbiddenError extends OrchestratorError {
  constructor(message: string, details: Readonly<Record<string, unknown>> = {}) {
    super('FORBIDDEN', message, details);
  }
}

/**
 * The request contradicts the state of a run: cancel of a run that already SUCCEEDED/FAILED, an
 * idempotency key reused for a different request.
 */
export class RunConflictError extends OrchestratorError {
  constructor(message: string, details: Readonly<Record<string, unknown>> = {}) {
    super('CONFLICT', message, details);
  }
}

/**
 * A trigger beyond TDA_MAX_ACTIVE_RUNS_PER_OWNER (seed 003 `max_active_jobs_per_user`, active =
 * PENDING + RUNNING): 429, nothing created. Retryable: it succeeds once the owner's runs end.
 */
export class QuotaExceededError extends OrchestratorError {
  constructor(
    readonly ownerId: string,
    readonly active: number,
    readonly limit: number,
  ) {
    super(
      'QUOTA_EXCEEDED',
      `owner '${ownerId}' already has ${active} active runs (PENDING or RUNNING); TDA_MAX_ACTIVE_RUNS_PER_OWNER allows ${limit}. Wait for a run to finish or cancel one.`,
      { ownerId, active, limit },
    );
  }
}

/** One more live event stream than TDA_SSE_MAX_STREAMS_PER_OWNER allows: 429, retry later. */
export class StreamLimitError extends OrchestratorError {
  constructor(ownerId: string, open: number, limit: number) {
    super(
      'QUOTA_EXCEEDED',
      `owner '${ownerId}' already has ${String(open)} open event streams; TDA_SSE_MAX_STREAMS_PER_OWNER allows ${String(limit)}. Close one (or poll GET /runs/{runId}/status).`,
      { ownerId, open, limit },
    );
  }
}

/** No real-time feed behind the store (a test double without listeners): clients poll instead. */
export class LiveEventsUnavailableError extends OrchestratorError {
  constructor() {
    super(
      'UPSTREAM_UNAVAILABLE',
      'live events are not available here; poll GET /runs/{runId}/status',
      {},
      false,
    );
  }
}

/**
 * The instance is shutting down: a stream opened now would keep the HTTP server from closing.
 * Retryable: the client reconnects (to another instance, or to this one once restarted).
 */
export class ShuttingDownError extends OrchestratorError {
  constructor() {
    super('UPSTREAM_UNAVAILABLE', 'this instance is shutting down; reconnect', {}, true);
  }
}

/**
 * Some step-ready messages could not be published (the others were). Retryable: the caller
 * nacks (step events) or leaves it to the reconciler, which republishes READY steps.
 */
export class StepDispatchError extends OrchestratorError {
  constructor(
    readonly runId: string,
    readonly failedStepIds: readonly string[],
    readonly causes: readonly unknown[],
  ) {
    super(
      'UPSTREAM_UNAVAILABLE',
      `run '${runId}': could not publish step-ready for ${failedStepIds.join(', ')}`,
      {
        runId,
        failedStepIds: [...failedStepIds],
      },
    );
  }
}

/**
 * GET /runs/{runId}/steps/{stepId}/artifact for a step that has no primary artifact yet
 * (no outputs.gcs_uri: PENDING, READY, RUNNING, SKIPPED, CANCELLED or FAILED before writing).
 * A conflict with the state of the run, not a missing resource: the step exists.
 */
export class ArtifactNotAvailableError extends OrchestratorError {
  constructor(message: string, details: Readonly<Record<string, unknown>> = {}) {
    super('CONFLICT', message, details);
  }
}

/** Why a recorded artifact cannot be served (ArtifactUnavailableError `details.reason`). */
export type ArtifactUnavailableReason =
  'read_failed' | 'missing' | 'too_large' | 'not_json' | 'invalid_uri' | 'foreign_bucket';

/**
 * The step records an artifact but the API cannot serve it: storage failed (retryable), the
 * object is gone, it is over the response limit, not JSON, or its URI is not one this deployment
 * reads. A bad gateway answer (502): the request was fine, what is behind it is not. Only
 * `read_failed` is retryable; the others stay the same on a retry.
 */
export class ArtifactUnavailableError extends OrchestratorError {
  constructor(
    message: string,
    readonly reason: ArtifactUnavailableReason,
    details: Readonly<Record<string, unknown>>,
  ) {
    super('UPSTREAM_UNAVAILABLE', message, { ...details, reason }, reason === 'read_failed');
  }
}
