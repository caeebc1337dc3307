import {
  ERROR_CODE_INFO,
  TdaError,
  type ErrorCode,
  type ErrorDetails,
  type ErrorInfo,
} from '@tda/contracts';

export type { ErrorDetails } from '@tda/contracts';

/**
 * The errors this library throws: a contract `code` plus sanitized `details` naming the
 * offender (TdaError). Each family below fixes its code; the constructor is (message, details).
 */
export abstract class FlowEngineError extends TdaError {
  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}) {
    super(code, message, { details });
  }
}

/** The run document / step graph is unusable (seed 002 FLOW_RUN_INVALID). */
export class FlowRunInvalidError extends FlowEngineError {
  constructor(message: string, details: ErrorDetails = {}) {
    super('FLOW_RUN_INVALID', message, details);
  }
}

/** A caller asked for something impossible: unknown flowKey, bad scope, bad symbol, ... */
export class InvalidRequestError extends FlowEngineError {
  constructor(message: string, details: ErrorDetails = {}) {
    super('INVALID_REQUEST', message, details);
  }
}

/** The flowKey is not in the catalogue; details list the available keys. */
export class UnknownFlowKeyError extends InvalidRequestError {}

/** A stepId that the run does not contain. */
export class StepNotFoundError extends FlowEngineError {
  constructor(
    readonly runId: string,
    readonly stepId: string,
  ) {
    super('NOT_FOUND', `run '${runId}' has no step '${stepId}'`, { runId, stepId });
  }
}

/** Builds an ErrorInfo whose retryability comes from the contract table, not from the caller. */
export function errorInfo(code: ErrorCode, message: string, details?: ErrorDetails): ErrorInfo {
  const info: ErrorInfo = { code, message, retryable: ERROR_CODE_INFO[code].retryable };
  if (details !== undefined) info.details = { ...details };
  return info;
}
