import type { FetchCandlesRequest } from './candle-source.port';
import { InvalidCandleRequestError } from './market-data.errors';
import { isTimeframe } from './timeframes';

/** Rejects malformed requests the same way in every source (INVALID_STEP_INPUTS). */
export function assertValidRequest(request: FetchCandlesRequest): void {
  const { limit, from, to, asOf, timeframe } = request;
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
    ['asOf', asOf],
  ] as const) {
    if (value !== undefined && !Number.isFinite(value)) {
      throw new InvalidCandleRequestError(`${name} must be epoch milliseconds`, { [name]: value });
    }
  }
  if (from !== undefined && to !== undefined && from >= to) {
    throw new InvalidCandleRequestError('from must be before to', { from, to });
  }
  // asOf cuts at the END of source rows, to at their open time: one cut per request.
  if (asOf !== undefined && to !== undefined) {
    throw new InvalidCandleRequestError('asOf and to cannot be combined', { asOf, to });
  }
  if (from !== undefined && asOf !== undefined && from >= asOf) {
    throw new InvalidCandleRequestError('from must be before asOf', { from, asOf });
  }
}
