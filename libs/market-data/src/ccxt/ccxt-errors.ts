import {
  InvalidCandleRequestError,
  MarketDataError,
  MarketDataUnavailableError,
} from '../market-data.errors';

/** Longest exchange message quoted in an error: enough to diagnose, never a whole HTML page. */
const MAX_MESSAGE = 200;

/**
 * ccxt error class names from the most to the least specific (RateLimitExceeded, NetworkError,
 * OperationFailed, BaseError). Read from the prototype chain rather than with `instanceof`, so that
 * this module does not load ccxt (about 1 s) and works whichever copy of ccxt threw.
 */
export function ccxtErrorClasses(error: unknown): string[] {
  const names: string[] = [];
  if (!(error instanceof Error)) return names;
  for (
    let proto: unknown = Object.getPrototypeOf(error);
    proto !== null && proto !== Error.prototype && proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto)
  ) {
    const ctor: unknown = (proto as { constructor?: unknown }).constructor;
    if (typeof ctor === 'function') names.push(ctor.name);
  }
  return names.includes('BaseError') ? names : [];
}

/**
 * Maps a ccxt failure to a MarketDataError:
 * - NetworkError and its subclasses (RequestTimeout, RateLimitExceeded, DDoSProtection,
 *   ExchangeNotAvailable, OnMaintenance, InvalidNonce) → MARKET_DATA_UNAVAILABLE, retryable;
 * - BadSymbol → INVALID_STEP_INPUTS;
 * - any other ccxt error (ExchangeError, BadResponse, NotSupported, ...) → MARKET_DATA_UNAVAILABLE,
 *   not retryable (asking again would get the same answer).
 * Errors that are not ccxt's (a bug in our code) are returned unchanged.
 */
export function mapCcxtError(error: unknown, context: Record<string, unknown>): unknown {
  if (error instanceof MarketDataError) return error;
  const classes = ccxtErrorClasses(error);
  const [errorClass] = classes;
  if (errorClass === undefined || !(error instanceof Error)) return error;
  const details = { ...context, errorClass };
  const message = sanitize(error.message);
  if (classes.includes('BadSymbol')) {
    return new InvalidCandleRequestError(`exchange rejected the symbol: ${message}`, details);
  }
  if (classes.includes('NetworkError')) {
    return new MarketDataUnavailableError(
      `exchange unavailable (${errorClass}): ${message}`,
      details,
      { retryable: true, cause: error },
    );
  }
  return new MarketDataUnavailableError(`exchange error (${errorClass}): ${message}`, details, {
    retryable: false,
    cause: error,
  });
}

/** Drops query strings (they may carry signatures) and truncates. */
function sanitize(message: string): string {
  const cleaned = message
    .replace(/\?[^\s]*/g, '?…')
    .replace(/\s+/g, ' ')
    .trim();
  return cleaned.length > MAX_MESSAGE ? `${cleaned.slice(0, MAX_MESSAGE)}…` : cleaned;
}
