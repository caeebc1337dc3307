import { BacktestGridInvalidError, type GridViolation } from './backtest.errors';
import {
  countVariants,
  EXECUTION_FIELDS,
  STRATEGY_PARAMS,
  type ExecutionGrid,
  type GridRequest,
  type GridStrategy,
} from './grid';

export interface GridLimits {
  /** Expanded variants per job (seed: MAX_VARIANTS_PER_COMPUTE_DEFAULT). */
  maxVariants: number;
  /** Estimated compute memory per job, see estimateComputeBytes (seed: 5 GiB). */
  maxComputeBytes: number;
  /** The persisted cap of top_k (runtime config). */
  topKPersistedDefault: number;
}

export const DEFAULT_GRID_LIMITS: GridLimits = {
  maxVariants: 600_000,
  maxComputeBytes: 5 * 1024 ** 3,
  topKPersistedDefault: 100,
};

/** One execution combination: counts the base variants alone. */
const ONE_EXECUTION: ExecutionGrid = {
  direction: ['long_only'],
  fraction: [1],
  feeBps: [0],
  slippageBps: [0],
  stopLossPct: [0],
  takeProfitPct: [0],
  trailingStopPct: [0],
};

/** Indicator series (Float64Array of `bars`) the IndicatorCache will hold for this strategy grid. */
export function uniqueIndicatorSeries(strategy: GridStrategy): number {
  const p = strategy.params;
  const unique = (...lists: (number[] | undefined)[]) =>
    new Set(lists.flatMap((l) => l ?? [])).size;
  switch (strategy.kind) {
    case 'ma_cross':
      return unique(p['fast'], p['slow']);
    case 'rsi_reversion':
      return unique(p['period']);
    case 'bollinger_breakout':
      return 3 * unique(p['period']) * unique(p['k']); // middle, upper, lower
    case 'macd_cross':
      return 2 * countVariants({ strategy, execution: ONE_EXECUTION }).base; // macd, signal
  }
}

/**
 * Estimated compute memory in bytes = 8 × bars × (6 candle columns + unique indicator series)
 * + bars (the one Int8Array signal scratch, reused by every variant). Per-variant state is a few
 * numbers and the top-K is small, so they are left out.
 */
export function estimateComputeBytes(strategy: GridStrategy, bars: number): number {
  return 8 * bars * (6 + uniqueIndicatorSeries(strategy)) + bars;
}

type Check = (v: GridViolation[]) => void;

/** Values per list (the inputs contract's bounds): strategy parameters, execution fields. */
export const MAX_PARAM_VALUES = 1_000;
export const MAX_EXECUTION_VALUES = 100;
/** Base variants stage A may keep. */
export const MAX_PRESELECT = 100_000;

function checkList(
  path: string,
  list: unknown,
  valid: (x: unknown) => boolean,
  maxValues: number,
): Check {
  return (out) => {
    if (!Array.isArray(list) || list.length === 0) {
      out.push({ path, problem: 'empty_list' });
      return;
    }
    if (list.length > maxValues) {
      out.push({ path, problem: 'too_many_values', limit: maxValues, actual: list.length });
      return;
    }
    const bad = list.filter((x) => !valid(x));
    if (bad.length > 0) out.push({ path, problem: 'invalid_values', values: bad });
    else if (new Set(list).size !== list.length) out.push({ path, problem: 'duplicate_values' });
  };
}

const isInt = (min: number) => (x: unknown) => Number.isInteger(x) && (x as number) >= min;
const inRange =
  (lo: number, hi: number, loOpen = false) =>
  (x: unknown) =>
    typeof x === 'number' && (loOpen ? x > lo : x >= lo) && x <= hi;

const PARAM_RULES: Record<string, (x: unknown) => boolean> = {
  fast: isInt(1),
  slow: isInt(1),
  signal: isInt(1),
  period: isInt(1),
  k: inRange(0, Number.MAX_VALUE, true),
  lower: inRange(0, 100),
  upper: inRange(0, 100),
};

const EXECUTION_RULES: Record<keyof ExecutionGrid, (x: unknown) => boolean> = {
  direction: (x) => x === 'long_only' || x === 'long_short',
  feeBps: inRange(0, 10_000),
  fraction: inRange(0, 1, true),
  slippageBps: inRange(0, 10_000),
  stopLossPct: (x) => inRange(0, 100)(x) && x !== 100,
  takeProfitPct: inRange(0, Number.MAX_VALUE),
  trailingStopPct: (x) => inRange(0, 100)(x) && x !== 100,
};

/** Returns false when the strategy part is unusable (then no counting is attempted). */
function checkStrategy(strategy: GridStrategy | undefined, out: GridViolation[]): boolean {
  const known = strategy !== undefined && Object.hasOwn(STRATEGY_PARAMS, strategy.kind);
  const rules = known ? STRATEGY_PARAMS[strategy.kind] : undefined;
  if (strategy === undefined || rules === undefined) {
    out.push({ path: 'strategy.kind', problem: 'unknown_kind' });
    return false;
  }
  const before = out.length;
  const maOk =
    strategy.kind === 'ma_cross'
      ? ['ema', 'sma'].includes(strategy.ma ?? '')
      : strategy.ma === undefined;
  if (!maOk) out.push({ path: 'strategy.ma', problem: 'invalid_value' });
  const params = strategy.params ?? {};
  for (const name of rules.names) {
    const rule = PARAM_RULES[name] ?? (() => false);
    checkList(`strategy.params.${name}`, params[name], rule, MAX_PARAM_VALUES)(out);
  }
  const unknown = Object.keys(params)
    .filter((n) => !rules.names.includes(n))
    .sort();
  if (unknown.length > 0)
    out.push({ path: 'strategy.params', problem: 'unknown_params', values: unknown });
  // rsi period >= 2 (Wilder needs a previous close); the generic rule above allows 1.
  if (strategy.kind === 'rsi_reversion' && (params['period'] ?? []).includes(1)) {
    out.push({ path: 'strategy.params.period', problem: 'invalid_values', values: [1] });
  }
  return out.length === before;
}

function checkExecution(execution: ExecutionGrid | undefined, out: GridViolation[]): boolean {
  const before = out.length;
  for (const f of EXECUTION_FIELDS) {
    checkList(`execution.${f}`, execution?.[f], EXECUTION_RULES[f], MAX_EXECUTION_VALUES)(out);
  }
  return out.length === before;
}

function checkSizes(request: GridRequest, limits: GridLimits, out: GridViolation[]): void {
  const { top_k: topK, preselect, top_trades_n: topTrades } = request;
  if (!isInt(1)(topK)) out.push({ path: 'top_k', problem: 'invalid_value' });
  else if (topK > limits.topKPersistedDefault) {
    out.push({
      path: 'top_k',
      problem: 'above_limit',
      limit: limits.topKPersistedDefault,
      actual: topK,
    });
  }
  if (!isInt(1)(preselect)) out.push({ path: 'preselect', problem: 'invalid_value' });
  else if (preselect > MAX_PRESELECT) {
    out.push({
      path: 'preselect',
      problem: 'above_limit',
      limit: MAX_PRESELECT,
      actual: preselect,
    });
  }
  if (!isInt(0)(topTrades)) out.push({ path: 'top_trades_n', problem: 'invalid_value' });
  else if (isInt(1)(topK) && topTrades > topK) {
    out.push({ path: 'top_trades_n', problem: 'above_top_k', limit: topK, actual: topTrades });
  }
}

/**
 * Every guard of a grid request, at job creation (never discovered mid-run). All violations are
 * collected in a fixed order (strategy, execution, sizes, then the variant and memory caps) and
 * thrown as ONE BacktestGridInvalidError (VALIDATION_FAILED, 422): the same request always yields the
 * same payload. `bars` = candles the job will read (for the memory estimate).
 */
export function checkGridRequest(
  request: GridRequest,
  bars: number,
  limits: GridLimits = DEFAULT_GRID_LIMITS,
): void {
  const out: GridViolation[] = [];
  const strategyOk = checkStrategy(request.strategy, out);
  const executionOk = checkExecution(request.execution, out);
  checkSizes(request, limits, out);
  if (strategyOk && executionOk) {
    const counts = countVariants(request);
    if (counts.base === 0) out.push({ path: 'strategy.params', problem: 'no_valid_combination' });
    if (counts.expanded > limits.maxVariants) {
      out.push({
        path: 'variants',
        problem: 'above_limit',
        limit: limits.maxVariants,
        actual: counts.expanded,
      });
    }
    const bytes = estimateComputeBytes(request.strategy, bars);
    if (bytes > limits.maxComputeBytes) {
      out.push({
        path: 'compute_bytes',
        problem: 'above_limit',
        limit: limits.maxComputeBytes,
        actual: bytes,
      });
    }
  }
  if (out.length > 0) throw new BacktestGridInvalidError(out);
}
