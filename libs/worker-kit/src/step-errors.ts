import { ERROR_CODE_INFO, type ErrorCode, type ErrorInfo } from '@tda/contracts';

/**
 * A step failure a handler raises on purpose, with a code from the closed enum. The harness maps
 * it to a FAILED step (or to an in-process retry when the code is retryable and budget remains).
 * Messages and details must be sanitized: no secrets, prompt text or raw model output.
 */
export class StepError extends Error {
  readonly retryable: boolean;
  /**
   * What the handler knew when it failed (seed 002 "Finalize patch (failure)": timing + partial
   * metadata, e.g. an `llm` section with attempts and finishReason), merged into
   * steps.<id>.outputs.execution like StepResult.execution. Sanitized like the message.
   */
  readonly execution: Record<string, unknown> | undefined;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    options?: { retryable?: boolean; cause?: unknown; execution?: Record<string, unknown> },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'StepError';
    this.retryable = options?.retryable ?? ERROR_CODE_INFO[code].retryable;
    this.execution = options?.execution;
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
