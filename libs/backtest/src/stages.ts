import type { CandleArrays } from './candle-arrays';
import {
  baseVariants,
  countVariants,
  defaultExecution,
  EXECUTION_FIELDS,
  executionAt,
  variantKey,
  type GridRequest,
} from './grid';
import { BacktestParamsInvalidError } from './backtest.errors';
import { DEFAULT_GRID_LIMITS } from './grid-guards';
import { IndicatorCache } from './indicator-cache';
import { simulateVariant, type ExecutionParams, type Trade, type VariantMetrics } from './simulate';
import { computeSignals, type StrategySpec } from './strategies';
import { TopK } from './top-k';

export interface BaseScore {
  index: number;
  base_variant_key: string;
  spec: StrategySpec;
  metrics: VariantMetrics;
}

export interface VariantScore {
  variant_key: string;
  base_variant_key: string;
  spec: StrategySpec;
  execution: ExecutionParams;
  metrics: VariantMetrics;
}

export interface Progress {
  processed: number;
  total: number;
}

export interface StageOptions {
  /** Shared across stages so each indicator series is computed once per job. */
  cache?: IndicatorCache;
  /** Units between two onBatch / isCancelled calls (default 1000). */
  batchSize?: number;
  onBatch?: (progress: Progress, bestSoFar: VariantScore[]) => void;
  isCancelled?: () => boolean;
  topKPersistedDefault?: number;
  /**
   * Only stage-B units [from, to) (a shard: libs/backtest-parallel runs one per thread). Progress
   * then counts the shard's units (total = to - from). Default: every unit.
   */
  units?: UnitRange;
}

/** A contiguous range of stage-B units, `from` inclusive, `to` exclusive. */
export interface UnitRange {
  from: number;
  to: number;
}

/** The number of stage-B units: shortlist × execution combinations. */
export function stageBUnitCount(request: GridRequest, shortlistLength: number): number {
  return shortlistLength * EXECUTION_FIELDS.reduce((n, f) => n * request.execution[f].length, 1);
}

function unitRange(units: UnitRange | undefined, all: number): UnitRange {
  if (units === undefined) return { from: 0, to: all };
  const { from, to } = units;
  if (!(Number.isInteger(from) && Number.isInteger(to) && 0 <= from && from <= to && to <= all)) {
    throw new BacktestParamsInvalidError('stage B unit range out of bounds', { from, to, all });
  }
  return { from, to };
}

export type StageBResult =
  | { status: 'completed'; top: VariantScore[]; progress: Progress }
  | { status: 'cancelled'; top: VariantScore[]; progress: Progress };

export interface StageAOptions {
  cache?: IndicatorCache;
  /** Base variants between two onBatch / isCancelled calls (default 1000). */
  batchSize?: number;
  onBatch?: (progress: Progress) => void;
  isCancelled?: () => boolean;
}

export type StageAResult =
  | { status: 'completed'; shortlist: BaseScore[]; progress: Progress }
  | { status: 'cancelled'; shortlist: BaseScore[]; progress: Progress };

type RankedBase = BaseScore & { score: number; key: string };

function plainBase({ index, base_variant_key, spec, metrics }: RankedBase): BaseScore {
  return { index, base_variant_key, spec, metrics };
}

/** One batch boundary of stage A: its progress and the shortlist so far. */
export interface StageAStep {
  progress: Progress;
  shortlist(): BaseScore[];
}

/**
 * Stage A: streams every base variant, scored with the default execution (the first value of each
 * execution list), and keeps the `preselect` best: total_return_pct desc, base_variant_key asc.
 * Progress units = base variants. As steps: yields before the first batch and after every batch
 * (a caller may await, check cancel or report between them) and returns the shortlist.
 */
export function* stageASteps(
  candles: CandleArrays,
  request: GridRequest,
  options: Pick<StageAOptions, 'cache' | 'batchSize'> = {},
): Generator<StageAStep, BaseScore[], void> {
  const cache = options.cache ?? new IndicatorCache(candles);
  const execution = defaultExecution(request.execution);
  const scratch = new Int8Array(candles.length);
  const shortlist = new TopK<RankedBase>(request.preselect);
  const progress: Progress = { processed: 0, total: countVariants(request).base };
  const batchSize = Math.max(1, options.batchSize ?? 1000);
  const step = (): StageAStep => ({
    progress: { ...progress },
    shortlist: () => shortlist.toArray().map(plainBase),
  });
  yield step();
  for (const base of baseVariants(request.strategy)) {
    computeSignals(cache, base.spec, scratch);
    const { metrics } = simulateVariant(candles, scratch, execution);
    const key = base.base_variant_key;
    if (shortlist.accepts(metrics.total_return_pct, key)) {
      shortlist.offer({ ...base, metrics, score: metrics.total_return_pct, key });
    }
    progress.processed++;
    if (progress.processed % batchSize === 0 || progress.processed === progress.total) {
      yield step();
    }
  }
  return shortlist.toArray().map(plainBase);
}

/** stageASteps run to the end in one go: `onBatch` after each batch, `isCancelled` before each. */
export function runStageA(
  candles: CandleArrays,
  request: GridRequest,
  options: StageAOptions = {},
): StageAResult {
  const steps = stageASteps(candles, request, options);
  for (let next = steps.next(); ; next = steps.next()) {
    if (next.done === true) {
      const total = countVariants(request).base;
      return { status: 'completed', shortlist: next.value, progress: { processed: total, total } };
    }
    const { progress } = next.value;
    if (progress.processed > 0) options.onBatch?.({ ...progress });
    if (progress.processed < progress.total && options.isCancelled?.() === true) {
      return { status: 'cancelled', shortlist: next.value.shortlist(), progress };
    }
  }
}

type RankedVariant = VariantScore & { score: number; key: string };

function plain(v: RankedVariant): VariantScore {
  const { variant_key, base_variant_key, spec, execution, metrics } = v;
  return { variant_key, base_variant_key, spec, execution, metrics };
}

/** One batch boundary of stage B: its progress and the best so far. */
export interface StageBStep {
  progress: Progress;
  top(): VariantScore[];
}

/**
 * Stage B: streams the shortlist × execution combinations (unit u = base u ÷ E, execution u mod E)
 * in batches with a running top-K, K = min(top_k, top_k_persisted_default). As steps: yields
 * before the first batch and after every batch, and returns the top-K.
 */
export function* stageBSteps(
  candles: CandleArrays,
  request: GridRequest,
  shortlist: readonly BaseScore[],
  options: Pick<StageOptions, 'cache' | 'batchSize' | 'topKPersistedDefault' | 'units'> = {},
): Generator<StageBStep, VariantScore[], void> {
  const cache = options.cache ?? new IndicatorCache(candles);
  const cap = options.topKPersistedDefault ?? DEFAULT_GRID_LIMITS.topKPersistedDefault;
  const top = new TopK<RankedVariant>(Math.min(request.top_k, cap));
  const perBase = EXECUTION_FIELDS.reduce((n, f) => n * request.execution[f].length, 1);
  const { from, to } = unitRange(options.units, shortlist.length * perBase);
  const progress: Progress = { processed: 0, total: to - from };
  const batchSize = Math.max(1, options.batchSize ?? 1000);
  const scratch = new Int8Array(candles.length);
  const step = (): StageBStep => ({
    progress: { ...progress },
    top: () => top.toArray().map(plain),
  });
  let signalsOf = -1;
  yield step();
  while (progress.processed < progress.total) {
    const end = Math.min(progress.total, progress.processed + batchSize);
    for (let u = from + progress.processed; u < from + end; u++) {
      const baseIndex = Math.floor(u / perBase);
      const base = shortlist[baseIndex] as BaseScore;
      if (signalsOf !== baseIndex) computeSignals(cache, base.spec, scratch);
      signalsOf = baseIndex;
      const execution = executionAt(request.execution, u % perBase);
      const { metrics } = simulateVariant(candles, scratch, execution);
      const key = variantKey(base.base_variant_key, execution);
      if (!top.accepts(metrics.total_return_pct, key)) continue;
      const { base_variant_key, spec } = base;
      const score = metrics.total_return_pct;
      top.offer({ variant_key: key, base_variant_key, spec, execution, metrics, score, key });
    }
    progress.processed = end;
    yield step();
  }
  return top.toArray().map(plain);
}

/** stageBSteps run to the end in one go: `onBatch` after each batch, `isCancelled` before each. */
export function runStageB(
  candles: CandleArrays,
  request: GridRequest,
  shortlist: readonly BaseScore[],
  options: StageOptions = {},
): StageBResult {
  const steps = stageBSteps(candles, request, shortlist, options);
  let progress: Progress = { processed: 0, total: 0 };
  for (let next = steps.next(); ; next = steps.next()) {
    if (next.done === true) return { status: 'completed', top: next.value, progress };
    progress = next.value.progress;
    if (progress.processed > 0) options.onBatch?.({ ...progress }, next.value.top());
    if (progress.processed < progress.total && options.isCancelled?.() === true) {
      return { status: 'cancelled', top: next.value.top(), progress };
    }
  }
}

export interface FinalVariant extends VariantScore {
  /** 1 = best. */
  rank: number;
  report_table_md: string;
  /** Only for the `top_trades_n` best; null for the others. */
  trades: Trade[] | null;
}

/**
 * Finalizing: recomputes each top variant with the detailed scorer, re-ranks (same order rules),
 * builds its report table and keeps trades for the `top_trades_n` best only.
 */
export function finalize(
  candles: CandleArrays,
  request: GridRequest,
  top: readonly VariantScore[],
  options: Pick<StageOptions, 'cache'> = {},
): FinalVariant[] {
  const cache = options.cache ?? new IndicatorCache(candles);
  const scratch = new Int8Array(candles.length);
  const ranked = new TopK<RankedVariant & { tradeList: Trade[] }>(top.length);
  for (const v of top) {
    computeSignals(cache, v.spec, scratch);
    const { metrics, trades } = simulateVariant(candles, scratch, v.execution, { detailed: true });
    ranked.offer({
      ...v,
      metrics,
      tradeList: trades,
      score: metrics.total_return_pct,
      key: v.variant_key,
    });
  }
  return ranked.toArray().map((v, i) => ({
    ...plain(v),
    rank: i + 1,
    report_table_md: reportTableMd(v),
    trades: i < request.top_trades_n ? v.tradeList : null,
  }));
}

function cell(value: number | string | null): string {
  if (value === null) return 'n/a';
  if (typeof value === 'string') return value;
  return Number.isInteger(value) ? String(value) : value.toFixed(4);
}

/** A two-column Markdown table: the variant key, strategy and execution params, then the metrics. */
export function reportTableMd(v: VariantScore): string {
  const rows: [string, number | string | null][] = [['variant_key', v.variant_key]];
  for (const [k, value] of Object.entries(v.spec)) rows.push([`strategy.${k}`, value]);
  for (const [k, value] of Object.entries(v.execution)) rows.push([`execution.${k}`, value]);
  for (const [k, value] of Object.entries(v.metrics)) rows.push([k, value]);
  const body = rows.map(([k, value]) => `| ${k} | ${cell(value).replace(/\|/g, '\\|')} |`);
  return ['| field | value |', '| --- | --- |', ...body].join('\n');
}
