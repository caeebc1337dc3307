import { ERROR_CODE_INFO, type ErrorCode } from '@tda/contracts';

/**
 * Errors the orchestrator raises itself (the flow-engine and flow-store families cover the
 * rest). Each carries a contract `code`, so the exception filter derives the HTTP status from
 * ERROR_CODE_INFO and never has to guess.
 */
export abstract class OrchestratorError extends Error {
  abstract readonly code: ErrorCode;

  constructor(
    message: string,
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }

  get retryable(): boolean {
    return ERROR_CODE_INFO[this.code].retryable;
  }
}

/** Missing or wrong bearer token. */
export class UnauthenticatedError extends OrchestratorError {
  readonly code = 'UNAUTHENTICATED' as const;
}

/**
 * The request contradicts the state of a run: cancel of a run that already SUCCEEDED/FAILED, an
 * idempotency key reused for a different request.
 */
export class RunConflictError extends OrchestratorError {
  readonly code = 'CONFLICT' as const;
}

/**
 * Some step-ready messages could not be published (the others were). Retryable: the caller
 * nacks (step events) or leaves it to the reconciler, which republishes READY steps.
 */
export class StepDispatchError extends OrchestratorError {
  readonly code = 'UPSTREAM_UNAVAILABLE' as const;

  constructor(
    readonly runId: string,
    readonly failedStepIds: readonly string[],
    readonly causes: readonly unknown[],
  ) {
    super(`run '${runId}': could not publish step-ready for ${failedStepIds.join(', ')}`, {
      runId,
      failedStepIds: [...failedStepIds],
    });
  }
}
