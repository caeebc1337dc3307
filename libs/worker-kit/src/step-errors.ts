import { TdaError, type ErrorCode, type TdaErrorOptions } from '@tda/contracts';

export interface StepErrorOptions extends TdaErrorOptions {
  /**
   * What the handler knew when it failed (seed 002 "Finalize patch (failure)": timing + partial
   * metadata, e.g. an `llm` section with requests and finishReason), merged into
   * steps.<id>.outputs.execution like StepResult.execution. Sanitized like the message.
   */
  execution?: Record<string, unknown>;
  /**
   * The thrower already spent its own retries, or did something that must not happen twice in
   * one delivery (an answered model call): the harness finalizes without an in-process retry.
   * `retryable` still says whether a later retry of the step can help.
   */
  final?: boolean;
}

/**
 * A step failure a handler raises on purpose (TdaError). Any TdaError a handler throws is mapped
 * the same way (code, message, details, retryable); StepError adds the partial execution metadata
 * and the `final` flag. Messages and details must be sanitized: no secrets, prompt text or raw
 * model output.
 */
export class StepError extends TdaError {
  readonly execution: Record<string, unknown> | undefined;
  readonly final: boolean;

  constructor(code: ErrorCode, message: string, options: StepErrorOptions = {}) {
    const { execution, final, ...base } = options;
    super(code, message, base);
    this.execution = execution;
    this.final = final ?? false;
  }
}

/** Bad `steps.<id>.inputs` or unusable upstream references: FAILED, never retried. */
export class StepInputError extends StepError {
  constructor(message: string, details?: Record<string, unknown>) {
    super('INVALID_STEP_INPUTS', message, {
      retryable: false,
      ...(details === undefined ? {} : { details }),
    });
  }
}
