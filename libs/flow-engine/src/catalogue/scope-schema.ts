import {
  ACCOUNT_ID_PATTERN,
  REPORT_ID_PATTERN,
  SYMBOL_PATTERN,
  TIMEFRAMES,
  type Timeframe,
} from '@tda/contracts';
import { DEFAULT_MODEL_NAME, MODEL_NAME_PATTERN, sortLongestFirst } from './scope';

/** A flow's scope as JSON Schema (GET /flows): what a client's trigger form is generated from. */
export interface ScopeSchema {
  type: 'object';
  properties: Record<string, Record<string, unknown>>;
  required: string[];
  additionalProperties: false;
}

/** Every scope field a caller may give, described once (the flows pick theirs). */
const FIELDS: Readonly<Record<string, Record<string, unknown>>> = {
  symbol: {
    type: 'string',
    title: 'Symbol',
    description: 'The market, e.g. BTC-USDT',
    pattern: SYMBOL_PATTERN.source,
    examples: ['BTC-USDT', 'ETH-USDT'],
  },
  asOf: {
    type: 'string',
    format: 'date-time',
    title: 'As of',
    description: 'The moment the run describes; default: the newest data every timeframe reaches',
  },
  lookback: {
    type: 'integer',
    title: 'Lookback (bars)',
    minimum: 10,
    maximum: 1_000,
  },
  modelName: {
    type: 'string',
    title: 'Model',
    default: DEFAULT_MODEL_NAME,
    pattern: MODEL_NAME_PATTERN.source,
    maxLength: 128,
  },
  temperature: { type: 'number', title: 'Temperature', minimum: 0, maximum: 2 },
  maxOutputTokens: { type: 'integer', title: 'Max output tokens', minimum: 1, maximum: 65_536 },
  accountId: {
    type: 'string',
    title: 'Account',
    description: 'The paper account (or live exchange account) to size against',
    pattern: ACCOUNT_ID_PATTERN.source,
    examples: ['demo'],
  },
  reportIds: {
    type: 'array',
    title: 'Reports',
    description: 'Report ids to aggregate; default: the latest report per timeframe at asOf',
    items: { type: 'string', pattern: REPORT_ID_PATTERN.source },
    minItems: 1,
    uniqueItems: true,
  },
};

function timeframesField(defaults: readonly Timeframe[]): Record<string, unknown> {
  return {
    type: 'array',
    title: 'Timeframes',
    items: { type: 'string', enum: sortLongestFirst(TIMEFRAMES) },
    minItems: 1,
    uniqueItems: true,
    default: sortLongestFirst(defaults),
  };
}

/** The schema of a scope with these fields (`timeframes` with the flow's default). */
export function scopeSchema(
  fields: readonly string[],
  options: { required: readonly string[]; timeframes?: readonly Timeframe[] },
): ScopeSchema {
  const properties: ScopeSchema['properties'] = {};
  for (const field of fields) {
    if (field === 'timeframes') {
      properties[field] = timeframesField(options.timeframes ?? TIMEFRAMES);
      continue;
    }
    const schema = FIELDS[field];
    // Fields without an entry are filled by the trigger (reportRefs), never by the caller.
    if (schema !== undefined) properties[field] = schema;
  }
  return {
    type: 'object',
    properties,
    required: [...options.required],
    additionalProperties: false,
  };
}
