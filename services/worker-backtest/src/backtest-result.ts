import { createHash } from 'node:crypto';
import type { BacktestResult, BacktestTrade, FlowRun } from '@tda/contracts';
import type { CandleArrays, FinalVariant, Trade, VariantScore } from '@tda/backtest';
import type { BacktestSnapshot, BacktestInputs } from '@tda/contracts';
import type { BacktestStage } from './backtest-job';

const iso = (ms: number): string => new Date(ms).toISOString();

/** sha256 of the candle columns as little-endian float64 (the data a result was computed on). */
export function candlesSha256(candles: CandleArrays): string {
  const hash = createHash('sha256');
  for (const column of [
    candles.open,
    candles.high,
    candles.low,
    candles.close,
    candles.volume,
    candles.openTime,
  ]) {
    const bytes = Buffer.alloc(column.length * 8);
    column.forEach((value, i) => bytes.writeDoubleLE(value, i * 8));
    hash.update(bytes);
  }
  return hash.digest('hex');
}

function trade(t: Trade): BacktestTrade {
  return {
    side: t.side,
    entryTime: iso(t.entryTime),
    entryPrice: t.entryPrice,
    exitTime: iso(t.exitTime),
    exitPrice: t.exitPrice,
    pnl: t.pnl,
    reason: t.reason,
  };
}

/** A variant as the contracts spell it (the strategy spec is a plain record of its fields). */
export function variantDocument(v: VariantScore): BacktestSnapshot['top'][number] {
  return {
    variant_key: v.variant_key,
    base_variant_key: v.base_variant_key,
    strategy: { ...v.spec } as BacktestSnapshot['top'][number]['strategy'],
    execution: { ...v.execution },
    metrics: { ...v.metrics },
  };
}

export interface ResultParts {
  run: FlowRun;
  stepId: string;
  inputs: BacktestInputs;
  asOf: string;
  source: string;
  candles: CandleArrays;
  counts: { base: number; execution: number; shortlist: number; stageB: number };
  top: FinalVariant[];
}

/** The backtest_result artifact: deterministic for the same inputs and candles. */
export function buildBacktestResult(parts: ResultParts): BacktestResult {
  const { candles, counts, inputs } = parts;
  return {
    schemaVersion: 1,
    runId: parts.run.runId,
    stepId: parts.stepId,
    symbol: inputs.symbol,
    timeframe: inputs.timeframe,
    asOf: parts.asOf,
    data: {
      source: parts.source,
      bars: candles.length,
      firstOpenTime: iso(candles.openTime[0] ?? 0),
      lastOpenTime: iso(candles.openTime[candles.length - 1] ?? 0),
      candlesSha256: candlesSha256(candles),
    },
    hashes: { ...inputs.hashes },
    counts: {
      baseVariants: counts.base,
      executionVariants: counts.execution,
      gridVariants: counts.base * counts.execution,
      preselectUsed: counts.shortlist,
      stageBVariants: counts.stageB,
      persisted: parts.top.length,
    },
    top: parts.top.map((v) => ({
      rank: v.rank,
      ...variantDocument(v),
      report_table_md: v.report_table_md,
      trades: v.trades === null ? null : v.trades.map(trade),
    })),
  };
}

/** The backtest_snapshot checkpoint of a running job. */
export function buildSnapshot(
  ctx: { run: FlowRun; stepId: string; attempt: number; now: Date },
  stage: BacktestStage,
  progress: { processed: number; total: number },
  top: VariantScore[],
): BacktestSnapshot {
  return {
    schemaVersion: 1,
    runId: ctx.run.runId,
    stepId: ctx.stepId,
    ownerId: ctx.run.ownerId,
    attempt: ctx.attempt,
    stage,
    processedUnits: progress.processed,
    totalUnits: progress.total,
    top: top.map(variantDocument),
    updatedAt: ctx.now.toISOString(),
  };
}
