import type { FetchCandlesRequest } from './candle-source.port';
import { InvalidCandleRequestError } from './market-data.errors';
import { isTimeframe } from './timeframes';

/** Rejects malformed requests the same way in every source (INVALID_STEP_INPUTS). */
export function assertValidRequest(request: FetchCandlesRequest): void {
  const { limit, from, to, timeframe } = request;
  if (!isTimeframe(timeframe)) {
    throw new InvalidCandleRequestError(`unknown timeframe '${String(timeframe)}'`, {
      timeframe,
    });
  }
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1)) {
    throw new InvalidCandleRequestError(`limit must be a positive integer, got ${limit}`, {
      limit,
    });
  }
  for (const [name, value] of [
    ['from', from],
    ['to', to],
  ] as const) {
    if (value !== undefined && !Number.isFinite(value)) {
      throw new InvalidCandleRequestError(`${name} must be epoch milliseconds`, { [name]: value });
    }
  }
  if (from !== undefined && to !== undefined && from >= to) {
    throw new InvalidCandleRequestError('from must be before to', { from, to });
  }
}
