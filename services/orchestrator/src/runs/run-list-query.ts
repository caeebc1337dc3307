import { FLOW_KEY_PATTERN, RUN_STATUSES, type RunStatus } from '@tda/contracts';
import { InvalidRequestError } from '@tda/flow-engine';
import { LIST_LIMIT_MAX, type RunListQuery } from '@tda/flow-store';

export const DEFAULT_LIST_LIMIT = 20;
// No ownerId: the acting owner is the filter (X-TDA-Owner for an admin).
const ALLOWED = ['limit', 'cursor', 'status', 'flowKey', 'symbol', 'idempotencyKey'] as const;
const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9_:-]{1,200}$/;

function isRunStatus(value: string): value is RunStatus {
  return (RUN_STATUSES as readonly string[]).includes(value);
}

/**
 * The query parameters as strings, strictly: an unknown parameter or one given more than once is
 * a 400 (a typo such as `?stauts=` must not be silently ignored).
 */
export function strictQuery(
  raw: Readonly<Record<string, unknown>>,
  allowed: readonly string[],
): Partial<Record<string, string>> {
  const unknown = Object.keys(raw).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) {
    throw new InvalidRequestError(`unknown query parameter(s): ${unknown.join(', ')}`, {
      unknownParameters: unknown,
      allowedParameters: [...allowed],
    });
  }
  const values: Partial<Record<string, string>> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (typeof value !== 'string') {
      throw new InvalidRequestError(`query parameter ${key} must be given once, as a string`, {
        parameter: key,
      });
    }
    values[key] = value;
  }
  return values;
}

/**
 * `GET /runs` query string -> a store list query. Strict: an unknown or repeated parameter is a
 * 400 (a typo such as `?stauts=` must not silently list everything).
 */
export function parseRunListQuery(raw: Readonly<Record<string, unknown>>): RunListQuery {
  const values = strictQuery(raw, ALLOWED);
  const query: RunListQuery = { limit: DEFAULT_LIST_LIMIT };
  const { limit, cursor, status, flowKey, symbol, idempotencyKey } = values;
  if (limit !== undefined) {
    const parsed = /^[0-9]{1,4}$/.test(limit) ? Number(limit) : Number.NaN;
    if (!(parsed >= 1 && parsed <= LIST_LIMIT_MAX)) {
      throw new InvalidRequestError(`limit must be an integer in 1..${LIST_LIMIT_MAX}`, {
        parameter: 'limit',
        max: LIST_LIMIT_MAX,
      });
    }
    query.limit = parsed;
  }
  if (cursor !== undefined) {
    if (cursor === '') {
      throw new InvalidRequestError('cursor must not be empty', { parameter: 'cursor' });
    }
    query.cursor = cursor;
  }
  if (status !== undefined) {
    if (!isRunStatus(status)) {
      throw new InvalidRequestError(`status must be one of ${RUN_STATUSES.join(', ')}`, {
        parameter: 'status',
        allowed: [...RUN_STATUSES],
      });
    }
    query.status = status;
  }
  if (flowKey !== undefined) {
    if (!FLOW_KEY_PATTERN.test(flowKey)) {
      throw new InvalidRequestError('flowKey must look like <name>_v<N>', {
        parameter: 'flowKey',
        pattern: FLOW_KEY_PATTERN.source,
      });
    }
    query.flowKey = flowKey;
  }
  if (symbol !== undefined) {
    if (!/^[A-Za-z0-9/:._-]{1,40}$/.test(symbol)) {
      throw new InvalidRequestError('symbol must be a trading symbol such as BTC-USDT', {
        parameter: 'symbol',
      });
    }
    query.symbol = symbol;
  }
  if (idempotencyKey !== undefined) {
    if (!IDEMPOTENCY_KEY_PATTERN.test(idempotencyKey)) {
      throw new InvalidRequestError('idempotencyKey is not a valid key', {
        parameter: 'idempotencyKey',
        pattern: IDEMPOTENCY_KEY_PATTERN.source,
      });
    }
    query.idempotencyKey = idempotencyKey;
  }
  return query;
}
