import { TdaError } from '@tda/contracts';

/** A strategy or execution parameter the engine cannot run with (INVALID_REQUEST, not retryable). */
export class BacktestParamsInvalidError extends TdaError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('INVALID_REQUEST', message, { details });
  }
}
