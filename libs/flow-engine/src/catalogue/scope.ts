import { SYMBOL_PATTERN, TIMEFRAMES, type RunScope, type Timeframe } from '@tda/contracts';
import { InvalidRequestError } from '../errors';
import { isTimeframe, modelVariant } from '../ids';

/** Longest first: the order in which multi-timeframe reports build on each other. */
export const TIMEFRAME_ORDER: readonly Timeframe[] = ['1M', '1w', '1d', '4h', '1h'];

export function sortLongestFirst(timeframes: readonly Timeframe[]): Timeframe[] {
  return [...timeframes].sort((a, b) => TIMEFRAME_ORDER.indexOf(a) - TIMEFRAME_ORDER.indexOf(b));
}

function invalid(field: string, message: string, extra: Record<string, unknown> = {}): never {
  throw new InvalidRequestError(`scope.${field} ${message}`, { field: `scope.${field}`, ...extra });
}

/** Rejects scope keys a flow does not know: a typo must not silently fall back to a default. */
export function assertKnownKeys(scope: RunScope, allowed: readonly string[]): void {
  const unknown = Object.keys(scope).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) {
    throw new InvalidRequestError(`unknown scope field(s): ${unknown.join(', ')}`, {
      unknownFields: unknown,
      allowedFields: [...allowed],
    });
  }
}

export function readSymbol(scope: RunScope): string {
  const { symbol } = scope;
  if (typeof symbol !== 'string' || !SYMBOL_PATTERN.test(symbol)) {
    invalid('symbol', 'must be a trading symbol such as BTC-USDT, BTC/USDT or BTCUSDT', {
      value: typeof symbol === 'string' ? symbol : null,
      pattern: SYMBOL_PATTERN.source,
    });
  }
  return symbol;
}

/** Unique, supported timeframes, longest first; `fallback` when absent. */
export function readTimeframes(scope: RunScope, fallback: readonly Timeframe[]): Timeframe[] {
  const raw: unknown = scope.timeframes;
  if (raw === undefined) return sortLongestFirst(fallback);
  if (!Array.isArray(raw) || raw.length === 0) invalid('timeframes', 'must be a non-empty array');
  const unsupported = raw.filter((tf) => !isTimeframe(tf));
  if (unsupported.length > 0) {
    invalid(
      'timeframes',
      `contains unsupported timeframe(s) ${unsupported.map(String).join(', ')}`,
      {
        unsupported,
        allowed: [...TIMEFRAMES],
      },
    );
  }
  const timeframes = raw as Timeframe[];
  const duplicates = timeframes.filter((tf, i) => timeframes.indexOf(tf) !== i);
  if (duplicates.length > 0) invalid('timeframes', 'contains duplicates', { duplicates });
  return sortLongestFirst(timeframes);
}

export const DEFAULT_MODEL_NAME = 'gemini-2.5-flash';
/** contracts/llm_profile.schema.json modelName. */
export const MODEL_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._/-]*$/;

export function readModelName(scope: RunScope): string {
  const raw: unknown = scope['modelName'];
  if (raw === undefined) return DEFAULT_MODEL_NAME;
  if (typeof raw !== 'string' || raw.length > 128 || !MODEL_NAME_PATTERN.test(raw)) {
    invalid('modelName', 'must be a model name such as gemini-2.5-flash', {
      pattern: MODEL_NAME_PATTERN.source,
    });
  }
  modelVariant(raw); // must give a non-empty stepId variant
  return raw;
}

export function readOptionalNumber(
  scope: RunScope,
  field: string,
  { min, max, integer }: { min: number; max: number; integer: boolean },
): number | undefined {
  const raw: unknown = scope[field];
  if (raw === undefined) return undefined;
  if (
    typeof raw !== 'number' ||
    !Number.isFinite(raw) ||
    (integer && !Number.isInteger(raw)) ||
    raw < min ||
    raw > max
  ) {
    invalid(field, `must be ${integer ? 'an integer' : 'a number'} in ${min}..${max}`, {
      min,
      max,
    });
  }
  return raw;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * scope.asOf (DESIGN §2): RFC 3339 with any offset, stored as UTC with a Z suffix (seconds, no
 * zero milliseconds) so the run, its artifacts and the index all spell the moment the same way.
 * Absent means "the newest complete candle": the orchestrator fills it at trigger.
 */
export function readAsOf(scope: RunScope): string | undefined {
  const raw: unknown = scope['asOf'];
  if (raw === undefined) return undefined;
  const ms = typeof raw === 'string' && RFC3339.test(raw) ? Date.parse(raw) : Number.NaN;
  if (Number.isNaN(ms)) {
    invalid('asOf', 'must be an RFC 3339 time such as 2026-09-20T00:00:00Z', {
      value: typeof raw === 'string' ? raw.slice(0, 64) : null,
    });
  }
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

/** `resolved` with scope.asOf carried over (normalized) when the caller gave one. */
export function withAsOf(resolved: RunScope, scope: RunScope): RunScope {
  const asOf = readAsOf(scope);
  return asOf === undefined ? resolved : { ...resolved, asOf };
}
