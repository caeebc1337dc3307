import { ERROR_CODE_INFO } from './generated/catalogue';
import type { ErrorCode, ErrorInfo } from './generated/types';

export type ErrorDetails = Readonly<Record<string, unknown>>;

export interface TdaErrorOptions {
  /** Sanitized facts naming the offender (ids, fields, sizes): never payloads or secrets. */
  details?: ErrorDetails;
  /** Whether trying again can help; default: the code's x-tda-codes retryability. */
  retryable?: boolean;
  cause?: unknown;
}

/** contracts/error.schema.json: message is 1..2000 characters. */
const MESSAGE_MAX = 2000;

/**
 * The one coded base of every error TDA raises on purpose (DESIGN.md §6): a `code` from the closed
 * ErrorCode enum, `retryable`, sanitized `details` and an optional `cause`. Every error family
 * (flow-engine, flow-store, artifacts, messaging, market data, charts, LLM, the harness, the
 * services) extends it, so an edge maps any of them without knowing the family: the step harness
 * to a FAILED step or a nack, the HTTP filter to `{code, message, details}` and the status of
 * ERROR_CODE_INFO[code]. Messages must be safe to persist and show (no secrets, prompt text or
 * raw model output); an error that is not a TdaError is unexpected and reported generically.
 */
export class TdaError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly details: ErrorDetails;

  constructor(code: ErrorCode, message: string, options: TdaErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options.retryable ?? ERROR_CODE_INFO[code].retryable;
    this.details = options.details ?? {};
  }

  /** The persisted / API shape (step.error, run.error, api_error without requestId). */
  toErrorInfo(): ErrorInfo {
    const message = this.message === '' ? this.code : this.message;
    const info: ErrorInfo = {
      code: this.code,
      message: message.length <= MESSAGE_MAX ? message : `${message.slice(0, MESSAGE_MAX - 1)}…`,
      retryable: this.retryable,
    };
    if (Object.keys(this.details).length > 0) info.details = { ...this.details };
    return info;
  }
}

export function isTdaError(value: unknown): value is TdaError {
  return value instanceof TdaError;
}
