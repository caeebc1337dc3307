import { TdaError, type ErrorInfo } from '@tda/contracts';

/**
 * A stage-B thread failed: the engine's own error (its code kept, e.g. INVALID_REQUEST) or a
 * crash of the thread (INTERNAL_ERROR). The pool has terminated every thread when this is thrown.
 */
export class BacktestThreadError extends TdaError {
  constructor(info: ErrorInfo) {
    super(info.code, `backtest stage B thread failed: ${info.message}`, {
      retryable: info.retryable,
      details: info.details ?? {},
    });
  }
}
