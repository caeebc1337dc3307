import { TdaError } from '@tda/contracts';

/** A strategy or execution parameter the engine cannot run with (INVALID_REQUEST, not retryable). */
export class BacktestParamsInvalidError extends TdaError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('INVALID_REQUEST', message, { details });
  }
}

/** One broken rule of a grid request; `path` names the field, `problem` is a stable code. */
export interface GridViolation {
  path: string;
  problem: string;
  values?: unknown[];
  limit?: number;
  actual?: number;
}

/**
 * A grid request refused at creation (VALIDATION_FAILED → 422, not retryable): every violation at
 * once, in a fixed order, so the same request always gets the same payload.
 */
export class BacktestGridInvalidError extends TdaError {
  constructor(readonly violations: GridViolation[]) {
    super(
      'VALIDATION_FAILED',
      `backtest grid request refused: ${violations.map((v) => `${v.path} ${v.problem}`).join('; ')}`,
      {
        details: { violations },
      },
    );
  }
}
