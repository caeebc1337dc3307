import {
  RUN_ID_PATTERN,
  STEP_ID_MAX_LENGTH,
  STEP_ID_PATTERN,
  SYMBOL_PATTERN,
  TIMEFRAMES,
  type StepType,
  type Timeframe,
} from '@tda/contracts';
import { InvalidRequestError } from './errors';
import { toTimestamp } from './time';

/**
 * A source of uniform numbers in [0, 1) (Math.random's contract). Injected so that ids are
 * reproducible in tests and decisions stay pure.
 */
export type RandomSource = () => number;

/** contracts/common.schema.json RunId maxLength (not exported as a constant by contracts). */
export const RUN_ID_MAX_LENGTH = 120;
export const RUN_ID_SUFFIX_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
export const DEFAULT_RUN_ID_SUFFIX_LENGTH = 5;
const MIN_SUFFIX = 3;
const MAX_SUFFIX = 6;

/**
 * 'BTC/USDT' | 'btc-usdt' | 'BTCUSDT' -> 'BTC-USDT' | 'BTC-USDT' | 'BTCUSDT'. The slug is a runId
 * segment, so it must be storage-safe: '/' becomes '-'.
 */
export function symbolSlug(symbol: string): string {
  if (!SYMBOL_PATTERN.test(symbol)) {
    throw new InvalidRequestError(`invalid symbol '${symbol}'`, {
      field: 'scope.symbol',
      symbol,
      pattern: SYMBOL_PATTERN.source,
    });
  }
  return symbol.toUpperCase().replace('/', '-');
}

function pad(value: number, width = 2): string {
  return String(value).padStart(width, '0');
}

/** YYYYMMDD-HHmmss in UTC. */
function compactUtc(date: Date): string {
  toTimestamp(date); // rejects invalid dates
  return (
    `${pad(date.getUTCFullYear(), 4)}${pad(date.getUTCMonth() + 1)}${pad(date.getUTCDate())}-` +
    `${pad(date.getUTCHours())}${pad(date.getUTCMinutes())}${pad(date.getUTCSeconds())}`
  );
}

export function randomSuffix(random: RandomSource, length = DEFAULT_RUN_ID_SUFFIX_LENGTH): string {
  if (!Number.isInteger(length) || length < MIN_SUFFIX || length > MAX_SUFFIX) {
    throw new InvalidRequestError(`runId suffix length must be ${MIN_SUFFIX}..${MAX_SUFFIX}`, {
      suffixLength: length,
    });
  }
  const size = RUN_ID_SUFFIX_ALPHABET.length;
  let suffix = '';
  for (let i = 0; i < length; i++) {
    // clamp: a misbehaving source (returning 1 or a negative) must still give a valid id
    const index = Math.min(size - 1, Math.max(0, Math.floor(random() * size)));
    suffix += RUN_ID_SUFFIX_ALPHABET.charAt(index);
  }
  return suffix;
}

export interface RunIdInput {
  createdAt: Date;
  symbol: string;
  random: RandomSource;
  /** 3..6, default 5 (seed 001: a short collision guard). */
  suffixLength?: number;
}

/** `YYYYMMDD-HHmmss_<symbolSlug>_<suffix>` (seed 001), UTC time of createdAt. */
export function generateRunId(input: RunIdInput): string {
  const runId = `${compactUtc(input.createdAt)}_${symbolSlug(input.symbol)}_${randomSuffix(
    input.random,
    input.suffixLength,
  )}`;
  if (!isValidRunId(runId)) {
    throw new InvalidRequestError(`generated runId '${runId}' is invalid`, { runId });
  }
  return runId;
}

export function isValidRunId(value: unknown): value is string {
  return (
    typeof value === 'string' && value.length <= RUN_ID_MAX_LENGTH && RUN_ID_PATTERN.test(value)
  );
}

export interface ParsedRunId {
  /** Second-precision UTC creation time as RFC 3339. */
  createdAt: string;
  symbolSlug: string;
  suffix: string;
}

/** Splits a valid runId into its parts; undefined when it does not match RUN_ID_PATTERN. */
export function parseRunId(runId: string): ParsedRunId | undefined {
  if (!isValidRunId(runId)) return undefined;
  const match = /^(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})_(.+)_([a-z0-9]+)$/.exec(runId);
  if (match === null) return undefined;
  const [, y, mo, d, h, mi, s, slug, suffix] = match;
  if (slug === undefined || suffix === undefined) return undefined;
  return { createdAt: `${y}-${mo}-${d}T${h}:${mi}:${s}Z`, symbolSlug: slug, suffix };
}

// ---------------------------------------------------------------------------------------------
// stepIds

/** The first stepId segment per stepType, as in the seed 001 examples. */
export const STEP_ID_PREFIX: Readonly<Record<StepType, string>> = {
  OHLCV_EXPORT: 'ohlcv_export',
  CHART_EXPORT: 'charts',
  LLM_REPORT: 'llm_report',
  LLM_RECOMMENDATION: 'llm_reco',
  ACCOUNT_EXPORT: 'account_export',
  INDICATORS_ON_DEMAND: 'indicators_on_demand',
  NEWS_EXPORT: 'news_export',
  BACKTEST: 'backtest',
};

/** One stepId segment: no ':' (the separator) and nothing that is unsafe in the whole id. */
const SEGMENT_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

export function isTimeframe(value: unknown): value is Timeframe {
  return typeof value === 'string' && (TIMEFRAMES as readonly string[]).includes(value);
}

/**
 * A stepId is a Firestore field-path segment (`steps.<stepId>.status`) and part of a GCS object
 * name, so it must match STEP_ID_PATTERN (which excludes '.', '/', '*', '~', '[', ']' and
 * spaces) and fit STEP_ID_MAX_LENGTH.
 */
export function isStorageSafeStepId(value: unknown): value is string {
  return (
    typeof value === 'string' && value.length <= STEP_ID_MAX_LENGTH && STEP_ID_PATTERN.test(value)
  );
}

export interface StepIdParts {
  stepType: StepType;
  timeframe?: Timeframe;
  /** Further segments: template / prompt / model ids, e.g. ['prompt_month_v1', 'model_x']. */
  variant?: readonly string[];
}

/**
 * `stepType:timeframe:variant` (seed 001): `ohlcv_export:1M`, `charts:1M:ctpl_default_v1`,
 * `llm_report:1M:prompt_month_v1:model_gemini_2_5_flash`, `llm_reco:prompt_reco_v1:model_x`.
 */
export function buildStepId(parts: StepIdParts): string {
  const variant = parts.variant ?? [];
  for (const segment of variant) {
    if (!SEGMENT_PATTERN.test(segment)) {
      throw new InvalidRequestError(`invalid stepId segment '${segment}'`, {
        segment,
        pattern: SEGMENT_PATTERN.source,
      });
    }
  }
  // Without a timeframe the first variant segment sits where a timeframe would be parsed from.
  if (parts.timeframe === undefined && isTimeframe(variant[0])) {
    throw new InvalidRequestError(`stepId variant '${variant[0]}' would read as a timeframe`, {
      segment: variant[0],
    });
  }
  const segments = [STEP_ID_PREFIX[parts.stepType]];
  if (parts.timeframe !== undefined) segments.push(parts.timeframe);
  segments.push(...variant);
  const stepId = segments.join(':');
  if (!isStorageSafeStepId(stepId)) {
    throw new InvalidRequestError(`stepId '${stepId}' is not storage-safe`, { stepId });
  }
  return stepId;
}

export interface ParsedStepId {
  prefix: string;
  timeframe?: Timeframe;
  variant: string[];
}

/** Splits a stepId; the second segment is the timeframe when it is a known Timeframe. */
export function parseStepId(stepId: string): ParsedStepId {
  const [prefix = '', ...rest] = stepId.split(':');
  const [second] = rest;
  if (isTimeframe(second)) return { prefix, timeframe: second, variant: rest.slice(1) };
  return { prefix, variant: rest };
}

/** The timeframe embedded in a stepId (`charts:1w:...` -> '1w'), if any. */
export function stepIdTimeframe(stepId: string): Timeframe | undefined {
  return parseStepId(stepId).timeframe;
}

/** Lowercase, every run of characters outside [a-z0-9] becomes one '_', no leading/trailing '_'. */
export function variantSlug(value: string): string {
  return value
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

/** 'gemini-2.5-flash' -> 'model_gemini_2_5_flash' (seed 001 stepId variant for a model). */
export function modelVariant(modelName: string): string {
  const slug = variantSlug(modelName).replace(/^model_/, '');
  if (slug === '') {
    throw new InvalidRequestError(`invalid model name '${modelName}'`, { modelName });
  }
  return `model_${slug}`;
}
