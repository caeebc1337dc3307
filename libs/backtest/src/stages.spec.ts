import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toCandleArrays } from './candle-arrays';
import { baseVariants, expandedVariants, type GridRequest } from './grid';
import { IndicatorCache } from './indicator-cache';
import { simulateVariant } from './simulate';
import { finalize, runStageA, runStageB, type Progress, type VariantScore } from './stages';
import { computeSignals } from './strategies';
import { HOUR_MS, loadBundledBtc1h } from './testing/bundled-candles';

const candles = toCandleArrays(loadBundledBtc1h().slice(0, 500), HOUR_MS);

/** Plain brute force: every variant scored independently, sorted with Array.prototype.sort. */
function bruteForce(request: GridRequest, cap: number): { key: string; ret: number }[] {
  const cache = new IndicatorCache(candles);
  const byRank = (a: { key: string; ret: number }, b: { key: string; ret: number }) =>
    b.ret - a.ret || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
  const bases = [...baseVariants(request.strategy)];
  const stageA = bases
    .map((b) => {
      const [first] = [...expandedVariants(request.execution, b)];
      if (first === undefined) throw new Error('no execution');
      const signals = computeSignals(cache, b.spec);
      const ret = simulateVariant(candles, signals, first.execution).metrics.total_return_pct;
      return { base: b, key: b.base_variant_key, ret };
    })
    .sort(byRank)
    .slice(0, request.preselect);
  const all = stageA.flatMap(({ base }) =>
    [...expandedVariants(request.execution, base)].map((v) => ({
      key: v.variant_key,
      ret: simulateVariant(candles, computeSignals(cache, v.spec), v.execution).metrics
        .total_return_pct,
    })),
  );
  return all.sort(byRank).slice(0, Math.min(request.top_k, cap));
}

const subset = (values: number[]) => fc.subarray(values, { minLength: 1 });
const gridArb: fc.Arbitrary<GridRequest> = fc.record({
  strategy: fc.record({
    kind: fc.constant('ma_cross' as const),
    ma: fc.constantFrom('ema' as const, 'sma' as const),
    params: fc.record({ fast: subset([3, 5, 8, 12]), slow: subset([10, 20, 30]) }),
  }),
  execution: fc.record({
    direction: fc.subarray(['long_only' as const, 'long_short' as const], { minLength: 1 }),
    fraction: subset([1, 0.5]),
    feeBps: subset([0, 10]),
    slippageBps: subset([0, 5]),
    stopLossPct: subset([0, 1, 3]),
    takeProfitPct: subset([0, 2]),
    trailingStopPct: subset([0, 2]),
  }),
  top_k: fc.integer({ min: 1, max: 12 }),
  preselect: fc.integer({ min: 1, max: 12 }),
  top_trades_n: fc.constant(0),
});

function shuffled<T>(list: T[]): T[] {
  return [...list].reverse();
}

describe('stage A / stage B ranking', () => {
  it('top-K equals a brute-force sort of all variants (same keys, same order)', () => {
    fc.assert(
      fc.property(
        gridArb,
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 10 }),
        (request, batchSize, cap) => {
          const cache = new IndicatorCache(candles);
          const { shortlist } = runStageA(candles, request, { cache });
          const result = runStageB(candles, request, shortlist, {
            cache,
            batchSize,
            topKPersistedDefault: cap,
          });
          expect(result.status).toBe('completed');
          const expected = bruteForce(request, cap);
          expect(result.top.map((v) => v.variant_key)).toEqual(expected.map((e) => e.key));
          expect(result.top.map((v) => v.metrics.total_return_pct)).toEqual(
            expected.map((e) => e.ret),
          );
        },
      ),
      { numRuns: 30, seed: 15 },
    );
  });

  it('the stage A shortlist does not depend on the order of the lists', () => {
    const request: GridRequest = {
      strategy: {
        kind: 'rsi_reversion',
        params: { period: [14, 7, 21], lower: [20, 30, 25], upper: [80, 70] },
      },
      execution: {
        direction: ['long_only'],
        fraction: [1],
        feeBps: [10],
        slippageBps: [5],
        stopLossPct: [0],
        takeProfitPct: [0],
        trailingStopPct: [0],
      },
      top_k: 3,
      preselect: 5,
      top_trades_n: 1,
    };
    const reordered: GridRequest = {
      ...request,
      strategy: {
        kind: 'rsi_reversion',
        params: {
          upper: shuffled([80, 70]),
          lower: shuffled([20, 30, 25]),
          period: shuffled([14, 7, 21]),
        },
      },
    };
    const a = runStageA(candles, request);
    expect(a.shortlist).toHaveLength(5);
    expect(a.progress).toEqual({ processed: 18, total: 18 });
    expect(runStageA(candles, reordered)).toEqual(a);
  });

  it('cancel at a batch boundary stops early with the best so far', () => {
    const request: GridRequest = {
      strategy: { kind: 'ma_cross', ma: 'ema', params: { fast: [5, 8], slow: [20, 30] } },
      execution: {
        direction: ['long_only', 'long_short'],
        fraction: [1],
        feeBps: [0, 10],
        slippageBps: [0],
        stopLossPct: [0, 2, 4],
        takeProfitPct: [0],
        trailingStopPct: [0],
      },
      top_k: 3,
      preselect: 4,
      top_trades_n: 1,
    };
    const { shortlist } = runStageA(candles, request);
    const seen: Progress[] = [];
    let bestSeen: VariantScore[] = [];
    const result = runStageB(candles, request, shortlist, {
      batchSize: 5,
      onBatch: (progress, best) => {
        seen.push(progress);
        bestSeen = best;
      },
      isCancelled: () => seen.length >= 2,
    });
    expect(result.status).toBe('cancelled');
    expect(seen).toEqual([
      { processed: 5, total: 48 },
      { processed: 10, total: 48 },
    ]);
    expect(result.progress).toEqual({ processed: 10, total: 48 });
    expect(result.top).toEqual(bestSeen);
    expect(result.top).toHaveLength(3);
  });

  it('finalize: detailed metrics, a report table per variant, trades only for top_trades_n', () => {
    const request: GridRequest = {
      strategy: { kind: 'ma_cross', ma: 'sma', params: { fast: [5, 8, 12], slow: [20, 30] } },
      execution: {
        direction: ['long_short'],
        fraction: [1],
        feeBps: [10],
        slippageBps: [5],
        stopLossPct: [0, 3],
        takeProfitPct: [0],
        trailingStopPct: [0],
      },
      top_k: 4,
      preselect: 6,
      top_trades_n: 2,
    };
    const stageB = runStageB(candles, request, runStageA(candles, request).shortlist);
    const final = finalize(candles, request, stageB.top);
    expect(final.map((v) => v.variant_key)).toEqual(stageB.top.map((v) => v.variant_key));
    expect(final.map((v) => v.metrics)).toEqual(stageB.top.map((v) => v.metrics));
    expect(final.map((v) => v.rank)).toEqual([1, 2, 3, 4]);
    expect(final.map((v) => v.trades === null)).toEqual([false, false, true, true]);
    expect(final[0]?.trades?.length).toBe(final[0]?.metrics.trades);
    const table = final[0]?.report_table_md ?? '';
    expect(table.split('\n').slice(0, 3)).toEqual([
      '| field | value |',
      '| --- | --- |',
      // the key's `|` is escaped so the cell stays one cell
      `| variant_key | ${final[0]?.variant_key.replace('|', '\\|')} |`,
    ]);
    expect(table).toContain(
      `| total_return_pct | ${final[0]?.metrics.total_return_pct.toFixed(4)} |`,
    );
    expect(table).toContain('| execution.direction | long_short |');
  });

  it('stage A reports progress per batch of base variants and stops at a cancelled boundary', () => {
    const request: GridRequest = {
      strategy: {
        kind: 'bollinger_breakout',
        params: { period: [10, 20, 30, 40], k: [1.5, 2, 2.5] },
      },
      execution: {
        direction: ['long_only'],
        fraction: [1],
        feeBps: [0],
        slippageBps: [0],
        stopLossPct: [0],
        takeProfitPct: [0],
        trailingStopPct: [0],
      },
      top_k: 2,
      preselect: 3,
      top_trades_n: 0,
    };
    const seen: Progress[] = [];
    const full = runStageA(candles, request, { batchSize: 5, onBatch: (p) => seen.push(p) });
    expect(seen.map((p) => p.processed)).toEqual([5, 10, 12]);
    expect(full.status).toBe('completed');
    const cancelled = runStageA(candles, request, { batchSize: 5, isCancelled: () => true });
    expect(cancelled).toMatchObject({ status: 'cancelled', progress: { processed: 0, total: 12 } });
    let calls = 0;
    const later = runStageA(candles, request, { batchSize: 5, isCancelled: () => ++calls > 1 });
    expect(later.progress.processed).toBe(5);
  });
});
