import { ERROR_CODE_INFO, type ErrorCode, type ErrorInfo } from '@tda/contracts';

export type ErrorDetails = Readonly<Record<string, unknown>>;

/**
 * Shared shape of the errors this library throws: a contract error `code` plus sanitized
 * `details` naming the offender, convertible to the persisted/API `ErrorInfo`. Deliberately
 * tiny: each family below adds only its code.
 */
export abstract class FlowEngineError extends Error {
  abstract readonly code: ErrorCode;

  constructor(
    message: string,
    readonly details: ErrorDetails = {},
  ) {
    super(message);
    this.name = new.target.name;
  }

  get retryable(): boolean {
    return ERROR_CODE_INFO[this.code].retryable;
  }

  toErrorInfo(): ErrorInfo {
    return {
      code: this.code,
      message: this.message,
      details: { ...this.details },
      retryable: this.retryable,
    };
  }
}

/** The run document / step graph is unusable (seed 002 FLOW_RUN_INVALID). */
export class FlowRunInvalidError extends FlowEngineError {
  readonly code = 'FLOW_RUN_INVALID' as const;
}

/** A caller asked for something impossible: unknown flowKey, bad scope, bad symbol, ... */
export class InvalidRequestError extends FlowEngineError {
  readonly code = 'INVALID_REQUEST' as const;
}

/** The flowKey is not in the catalogue; details list the available keys. */
export class UnknownFlowKeyError extends InvalidRequestError {}

/** A stepId that the run does not contain. */
export class StepNotFoundError extends FlowEngineError {
  readonly code = 'NOT_FOUND' as const;

  constructor(
    readonly runId: string,
    readonly stepId: string,
  ) {
    super(`run '${runId}' has no step '${stepId}'`, { runId, stepId });
  }
}

/** Builds an ErrorInfo whose retryability comes from the contract table, not from the caller. */
export function errorInfo(code: ErrorCode, message: string, details?: ErrorDetails): ErrorInfo {
  const info: ErrorInfo = { code, message, retryable: ERROR_CODE_INFO[code].retryable };
  if (details !== undefined) info.details = { ...details };
  return info;
}
