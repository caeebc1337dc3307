import { TdaError, type Timeframe } from '@tda/contracts';

/**
 * Errors raised by every CandleSource. Each carries a `code` from the contracts' ErrorCode enum so
 * a step handler can turn it into a step error without knowing the adapter, and small sanitized
 * `details` (symbols, timeframes, exchange ids; never credentials or raw exchange payloads).
 */
export class MarketDataError extends TdaError {}

/** The source does not know the symbol. The message and details name what is available. */
export class UnknownSymbolError extends MarketDataError {
  constructor(
    readonly symbol: string,
    availableSymbols: readonly string[],
    extra: Record<string, unknown> = {},
  ) {
    super(
      'INVALID_STEP_INPUTS',
      `unknown symbol '${symbol}'; available: ${describeList(availableSymbols)}`,
      { details: { symbol, availableSymbols: [...availableSymbols], ...extra } },
    );
  }
}

/** The symbol exists but not in this timeframe. The message names the timeframes it has. */
export class UnsupportedTimeframeError extends MarketDataError {
  constructor(
    readonly symbol: string,
    readonly timeframe: string,
    availableTimeframes: readonly Timeframe[],
  ) {
    super(
      'INVALID_STEP_INPUTS',
      `timeframe '${timeframe}' is not available for '${symbol}'; available: ${describeList(availableTimeframes)}`,
      { details: { symbol, timeframe, availableTimeframes: [...availableTimeframes] } },
    );
  }
}

/** A malformed request (limit out of range, from >= to, ...). */
export class InvalidCandleRequestError extends MarketDataError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('INVALID_STEP_INPUTS', message, { details });
  }
}

/**
 * The market data could not be obtained: exchange down, rate limited, network failure (retryable),
 * or the provider returned no or unusable candles (`retryable: false`).
 */
export class MarketDataUnavailableError extends MarketDataError {
  constructor(
    message: string,
    details: Record<string, unknown> = {},
    options: { retryable?: boolean; cause?: unknown } = {},
  ) {
    super('MARKET_DATA_UNAVAILABLE', message, { ...options, details });
  }
}

/** At most this many names go into a message; details carry the full list. */
const MAX_LISTED = 20;

function describeList(items: readonly string[]): string {
  if (items.length === 0) return '(none)';
  const shown = items.slice(0, MAX_LISTED).join(', ');
  return items.length > MAX_LISTED ? `${shown}, … (${items.length} in total)` : shown;
}
