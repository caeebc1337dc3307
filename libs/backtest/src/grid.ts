import type { ExecutionParams } from './simulate';
import type { StrategySpec } from './strategies';

export type StrategyKind = StrategySpec['kind'];
export type Direction = ExecutionParams['direction'];

/** The indicator part of a grid (stage A): every listed value of every parameter is combined. */
export interface GridStrategy {
  kind: StrategyKind;
  /** Moving average of `ma_cross` (required there, absent elsewhere). */
  ma?: 'ema' | 'sma';
  /** Parameter name → values; the names of the kind, exactly (see STRATEGY_PARAMS). */
  params: Record<string, number[]>;
}

/** The risk/execution part of a grid (stage B): lists of ExecutionParams values. */
export interface ExecutionGrid {
  direction: Direction[];
  fraction: number[];
  feeBps: number[];
  slippageBps: number[];
  stopLossPct: number[];
  takeProfitPct: number[];
  trailingStopPct: number[];
}

/**
 * A backtest grid request. `top_k`: variants persisted (≤ top_k_persisted_default); `preselect`:
 * base variants kept by stage A for stage B; `top_trades_n`: best variants that keep trades (≤ top_k).
 */
export interface GridRequest {
  strategy: GridStrategy;
  execution: ExecutionGrid;
  top_k: number;
  preselect: number;
  top_trades_n: number;
}

/** The grid fields of a record holding more (a job's scope or its step's inputs). */
export function gridRequestOf(source: GridRequest): GridRequest {
  const { strategy, execution, top_k, preselect, top_trades_n } = source;
  return { strategy, execution, top_k, preselect, top_trades_n };
}

/**
 * Parameter names per kind, in canonical (sorted) order, and the pair that must be strictly
 * ascending (fast < slow, lower < upper): combinations breaking it are not variants.
 */
export const STRATEGY_PARAMS: Record<
  StrategyKind,
  { names: readonly string[]; ascending?: readonly [string, string] }
> = {
  ma_cross: { names: ['fast', 'slow'], ascending: ['fast', 'slow'] },
  rsi_reversion: { names: ['lower', 'period', 'upper'], ascending: ['lower', 'upper'] },
  bollinger_breakout: { names: ['k', 'period'] },
  macd_cross: { names: ['fast', 'signal', 'slow'], ascending: ['fast', 'slow'] },
};

/** ExecutionGrid fields in canonical (sorted) order: the order of variant keys and of checks. */
export const EXECUTION_FIELDS = [
  'direction',
  'feeBps',
  'fraction',
  'slippageBps',
  'stopLossPct',
  'takeProfitPct',
  'trailingStopPct',
] as const satisfies readonly (keyof ExecutionGrid)[];

export interface BaseVariant {
  /** Position in the canonical enumeration (values sorted ascending): stage A's index. */
  index: number;
  base_variant_key: string;
  spec: StrategySpec;
}

export interface ExpandedVariant {
  variant_key: string;
  base_variant_key: string;
  spec: StrategySpec;
  execution: ExecutionParams;
}

export interface VariantCounts {
  base: number;
  execution: number;
  /** base × execution: the units of stage B if every base were shortlisted. */
  expanded: number;
}

/** `ma_cross:ema:fast=10,slow=30` — kind, moving average, params in sorted name order. */
export function baseVariantKey(
  kind: StrategyKind,
  ma: string | undefined,
  values: Record<string, number>,
): string {
  const params = STRATEGY_PARAMS[kind].names.map((n) => `${n}=${String(values[n])}`).join(',');
  return `${kind}${ma === undefined ? '' : `:${ma}`}:${params}`;
}

/** Base key + `|` + the execution params in EXECUTION_FIELDS order. */
export function variantKey(baseKey: string, execution: ExecutionParams): string {
  return `${baseKey}|${EXECUTION_FIELDS.map((f) => `${f}=${String(execution[f])}`).join(',')}`;
}

function sortedValues(strategy: GridStrategy, name: string): number[] {
  return [...(strategy.params[name] ?? [])].sort((a, b) => a - b);
}

/** Pairs (a, b) with a < b from two lists, by sort + two pointers (nothing materialized). */
function ascendingPairs(a: number[], b: number[]): number {
  const bs = [...b].sort((x, y) => x - y);
  let count = 0;
  let j = 0;
  for (const x of [...a].sort((p, q) => p - q)) {
    while (j < bs.length && (bs[j] as number) <= x) j++;
    count += bs.length - j;
  }
  return count;
}

/** Counts base, execution and expanded variants without materializing any product. */
export function countVariants(request: Pick<GridRequest, 'strategy' | 'execution'>): VariantCounts {
  const { names, ascending } = STRATEGY_PARAMS[request.strategy.kind];
  const len = (n: string) => request.strategy.params[n]?.length ?? 0;
  let base = 1;
  for (const n of names) if (ascending === undefined || !ascending.includes(n)) base *= len(n);
  if (ascending !== undefined) {
    const [a, b] = ascending;
    base *= ascendingPairs(request.strategy.params[a] ?? [], request.strategy.params[b] ?? []);
  }
  let execution = 1;
  for (const f of EXECUTION_FIELDS) execution *= request.execution[f].length;
  return { base, execution, expanded: base * execution };
}

function toSpec(strategy: GridStrategy, v: Record<string, number>): StrategySpec {
  const p = (n: string) => v[n] as number;
  switch (strategy.kind) {
    case 'ma_cross':
      return { kind: 'ma_cross', ma: strategy.ma ?? 'ema', fast: p('fast'), slow: p('slow') };
    case 'rsi_reversion':
      return { kind: 'rsi_reversion', period: p('period'), lower: p('lower'), upper: p('upper') };
    case 'bollinger_breakout':
      return { kind: 'bollinger_breakout', period: p('period'), k: p('k') };
    case 'macd_cross':
      return { kind: 'macd_cross', fast: p('fast'), slow: p('slow'), signal: p('signal') };
  }
}

/**
 * Lazily yields the base variants in canonical order: mixed radix over the parameter names in
 * sorted order, each list sorted ascending, skipping combinations that break the ascending pair.
 */
export function* baseVariants(strategy: GridStrategy): Generator<BaseVariant> {
  const { names, ascending } = STRATEGY_PARAMS[strategy.kind];
  const lists = names.map((n) => sortedValues(strategy, n));
  if (lists.some((l) => l.length === 0)) return;
  const digits = names.map(() => 0);
  let index = 0;
  for (;;) {
    const values: Record<string, number> = {};
    names.forEach((n, i) => (values[n] = lists[i]?.[digits[i] as number] as number));
    if (
      ascending === undefined ||
      (values[ascending[0]] as number) < (values[ascending[1]] as number)
    ) {
      const ma = strategy.kind === 'ma_cross' ? (strategy.ma ?? 'ema') : undefined;
      yield {
        index,
        base_variant_key: baseVariantKey(strategy.kind, ma, values),
        spec: toSpec(strategy, values),
      };
      index++;
    }
    let d = names.length - 1;
    while (d >= 0 && (digits[d] as number) + 1 >= (lists[d] as number[]).length) digits[d--] = 0;
    if (d < 0) return;
    digits[d] = (digits[d] as number) + 1;
  }
}

/** The execution combination number `index` (mixed radix, last field fastest, lists as given). */
export function executionAt(grid: ExecutionGrid, index: number): ExecutionParams {
  let rest = index;
  const pick = <T>(list: T[]): T => {
    const value = list[rest % list.length] as T;
    rest = Math.floor(rest / list.length);
    return value;
  };
  // Reverse field order so the last canonical field varies fastest.
  const trailingStopPct = pick(grid.trailingStopPct);
  const takeProfitPct = pick(grid.takeProfitPct);
  const stopLossPct = pick(grid.stopLossPct);
  const slippageBps = pick(grid.slippageBps);
  const fraction = pick(grid.fraction);
  const feeBps = pick(grid.feeBps);
  const direction = pick(grid.direction);
  return { direction, fraction, feeBps, slippageBps, stopLossPct, takeProfitPct, trailingStopPct };
}

/** Stage A's execution: the first value of every execution list (put the default first). */
export function defaultExecution(grid: ExecutionGrid): ExecutionParams {
  return executionAt(grid, 0);
}

/** Lazily yields a base variant's expanded variants (execution combinations in executionAt order). */
export function* expandedVariants(
  grid: ExecutionGrid,
  base: BaseVariant,
): Generator<ExpandedVariant> {
  const total = EXECUTION_FIELDS.reduce((n, f) => n * grid[f].length, 1);
  for (let i = 0; i < total; i++) {
    const execution = executionAt(grid, i);
    yield {
      variant_key: variantKey(base.base_variant_key, execution),
      base_variant_key: base.base_variant_key,
      spec: base.spec,
      execution,
    };
  }
}
