import { TdaError, type Timeframe } from '@tda/contracts';
import type { DataCoverage } from './candle-source.port';
import { formatTimestamp as iso } from './timeframes';

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

/** Where an as-of refusal points (the run's scope field). */
const AS_OF_FIELD = 'scope.asOf';

/**
 * A run's asOf that one of its timeframes cannot reach: it must lie after the first source data
 * and at or before the end of the newest complete source data (`from < asOf <= to`). Refused at
 * trigger (INVALID_REQUEST, 400) and, defensively, by the sources. The message names the
 * timeframe, the requested asOf and the available range.
 */
export class AsOfOutOfRangeError extends MarketDataError {
  constructor(coverage: DataCoverage, asOf: number) {
    const { symbol, timeframe, from, to, source } = coverage;
    const range =
      from === null ? `at most ${iso(to)}` : `after ${iso(from)} and at most ${iso(to)}`;
    super(
      'INVALID_REQUEST',
      `asOf ${iso(asOf)} is outside the ${timeframe} data of ${symbol} (${source}): asOf must be ${range}`,
      {
        details: {
          field: AS_OF_FIELD,
          asOf: iso(asOf),
          timeframe,
          symbol,
          available: { from: from === null ? null : iso(from), to: iso(to) },
          source,
        },
        retryable: false,
      },
    );
  }
}

/** An asOf that is not an RFC 3339 date-time (INVALID_REQUEST). */
export class InvalidAsOfError extends MarketDataError {
  constructor(value: unknown, reason: string) {
    super('INVALID_REQUEST', `asOf ${JSON.stringify(value)} ${reason}`, {
      details: { field: AS_OF_FIELD, asOf: value },
      retryable: false,
    });
  }
}
