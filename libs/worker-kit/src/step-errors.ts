import { ERROR_CODE_INFO, type ErrorCode, type ErrorInfo } from '@tda/contracts';

/**
 * A step failure a handler raises on purpose, with a code from the closed enum. The harness maps
 * it to a FAILED step (or to an in-process retry when the code is retryable and budget remains).
 * Messages and details must be sanitized: no secrets, prompt text or raw model output.
 */
export class StepError extends Error {
  readonly retryable: boolean;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    options?: { retryable?: boolean; cause?: unknown },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'StepError';
    this.retryable = options?.retryable ?? ERROR_CODE_INFO[code].retryable;
  }

  toErrorInfo(): ErrorInfo {
    return {
      code: this.code,
      message: this.message,
      retryable: this.retryable,
      ...(this.details === undefined ? {} : { details: this.details }),
    };
  }
}

/** Bad `steps.<id>.inputs` or unusable upstream references: FAILED, never retried. */
export class StepInputError extends StepError {
  constructor(message: string, details?: Record<string, unknown>) {
    super('INVALID_STEP_INPUTS', message, details, { retryable: false });
    this.name = 'StepInputError';
  }
}
