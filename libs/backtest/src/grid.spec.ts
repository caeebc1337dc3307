import { describe, expect, it } from 'vitest';
import { BacktestGridInvalidError } from './backtest.errors';
import {
  baseVariants,
  countVariants,
  defaultExecution,
  expandedVariants,
  type ExecutionGrid,
  type GridRequest,
} from './grid';
import { checkGridRequest, DEFAULT_GRID_LIMITS, estimateComputeBytes } from './grid-guards';
import { canonicalJson, engineParamsHash, requestHash } from './grid-hash';

const EXEC: ExecutionGrid = {
  direction: ['long_only', 'long_short'],
  fraction: [1, 0.5],
  feeBps: [10],
  slippageBps: [5],
  stopLossPct: [0, 2, 4],
  takeProfitPct: [0],
  trailingStopPct: [0],
};

function request(over: Partial<GridRequest> = {}): GridRequest {
  return {
    strategy: { kind: 'ma_cross', ma: 'ema', params: { fast: [20, 10, 30], slow: [30, 50] } },
    execution: EXEC,
    top_k: 5,
    preselect: 3,
    top_trades_n: 2,
    ...over,
  };
}

function refusal(fn: () => void): BacktestGridInvalidError {
  try {
    fn();
  } catch (error) {
    if (error instanceof BacktestGridInvalidError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('grid keys, counts and iterators', () => {
  it('enumerates base variants in canonical order, skipping fast >= slow, as counted', () => {
    const keys = [...baseVariants(request().strategy)].map((b) => b.base_variant_key);
    expect(keys).toEqual([
      'ma_cross:ema:fast=10,slow=30',
      'ma_cross:ema:fast=10,slow=50',
      'ma_cross:ema:fast=20,slow=30',
      'ma_cross:ema:fast=20,slow=50',
      'ma_cross:ema:fast=30,slow=50',
    ]);
    expect(countVariants(request())).toEqual({ base: 5, execution: 12, expanded: 60 });
  });

  it('counts without materializing: 10^3 × 10^3 pairs', () => {
    const values = Array.from({ length: 1000 }, (_, i) => i + 1);
    const counts = countVariants(
      request({
        strategy: { kind: 'ma_cross', ma: 'sma', params: { fast: values, slow: values } },
      }),
    );
    expect(counts.base).toBe((1000 * 999) / 2);
  });

  it('expands a base into unique variant keys; the first is the stage A default', () => {
    const [base] = [...baseVariants(request().strategy)];
    if (base === undefined) throw new Error('no base');
    const expanded = [...expandedVariants(EXEC, base)];
    expect(expanded).toHaveLength(12);
    expect(new Set(expanded.map((v) => v.variant_key)).size).toBe(12);
    expect(expanded[0]?.execution).toEqual(defaultExecution(EXEC));
    expect(expanded[0]?.variant_key).toBe(
      'ma_cross:ema:fast=10,slow=30|direction=long_only,feeBps=10,fraction=1,slippageBps=5,' +
        'stopLossPct=0,takeProfitPct=0,trailingStopPct=0',
    );
  });
});

describe('hashes', () => {
  it('canonical JSON sorts keys, has no spaces and escapes non-ASCII', () => {
    expect(canonicalJson({ b: [1, { d: 'é', c: null }], a: 'x' })).toBe(
      '{"a":"x","b":[1,{"c":null,"d":"\\u00e9"}]}',
    );
  });

  it('request_hash ignores key order; engine_params_hash follows the execution', () => {
    const shuffled = JSON.parse(JSON.stringify(request())) as GridRequest;
    const reordered: GridRequest = {
      top_trades_n: shuffled.top_trades_n,
      preselect: shuffled.preselect,
      top_k: shuffled.top_k,
      execution: shuffled.execution,
      strategy: shuffled.strategy,
    };
    expect(requestHash(reordered)).toBe(requestHash(request()));
    expect(requestHash(request())).toMatch(/^[0-9a-f]{64}$/);
    expect(engineParamsHash(EXEC)).not.toBe(engineParamsHash({ ...EXEC, feeBps: [11] }));
  });
});

describe('checkGridRequest', () => {
  it('accepts a valid request', () => {
    expect(() => checkGridRequest(request(), 10_000)).not.toThrow();
  });

  it('refuses 600,001 variants (and not 600,000) with VALIDATION_FAILED', () => {
    const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);
    const single: ExecutionGrid = {
      ...EXEC,
      direction: ['long_only'],
      fraction: [1],
      stopLossPct: [0],
    };
    // fast 1..1000 × slow 1001..1600 = 600,000 pairs; slow 2 adds exactly one (fast 1 < 2).
    const grid = (extra: number[]) =>
      request({
        strategy: {
          kind: 'ma_cross',
          ma: 'ema',
          params: { fast: range(1, 1000), slow: [...range(1001, 600), ...extra] },
        },
        execution: single,
      });
    expect(() => checkGridRequest(grid([]), 100)).not.toThrow();
    const error = refusal(() => checkGridRequest(grid([2]), 100));
    expect(error.details).toEqual({
      violations: [{ path: 'variants', problem: 'above_limit', limit: 600_000, actual: 600_001 }],
    });
  });

  it('refuses the memory cap, documented formula', () => {
    const r = request();
    // fast ∪ slow = {10, 20, 30, 50}: 4 series + 6 candle columns.
    expect(estimateComputeBytes(r.strategy, 1000)).toBe(8 * 1000 * 10 + 1000);
    const limits = { ...DEFAULT_GRID_LIMITS, maxComputeBytes: 80_000 };
    const error = refusal(() => checkGridRequest(r, 1000, limits));
    expect(error.violations).toEqual([
      { path: 'compute_bytes', problem: 'above_limit', limit: 80_000, actual: 81_000 },
    ]);
  });

  it('lists every violation in a fixed order, the same payload every time', () => {
    const bad = (): GridRequest =>
      request({
        strategy: {
          kind: 'rsi_reversion',
          params: { period: [1, 14], lower: [], upper: [70, 70], x: [1] },
        },
        execution: { ...EXEC, fraction: [0, 1.5], direction: [] },
        top_k: 101,
        preselect: 0,
        top_trades_n: 200,
      });
    const first = refusal(() => checkGridRequest(bad(), 1000));
    expect(first.violations).toEqual([
      { path: 'strategy.params.lower', problem: 'empty_list' },
      { path: 'strategy.params.upper', problem: 'duplicate_values' },
      { path: 'strategy.params', problem: 'unknown_params', values: ['x'] },
      { path: 'strategy.params.period', problem: 'invalid_values', values: [1] },
      { path: 'execution.direction', problem: 'empty_list' },
      { path: 'execution.fraction', problem: 'invalid_values', values: [0, 1.5] },
      { path: 'top_k', problem: 'above_limit', limit: 100, actual: 101 },
      { path: 'preselect', problem: 'invalid_value' },
      { path: 'top_trades_n', problem: 'above_top_k', limit: 101, actual: 200 },
    ]);
    expect(refusal(() => checkGridRequest(bad(), 1000)).toErrorInfo()).toEqual(first.toErrorInfo());
  });

  it('refuses a grid with no valid combination', () => {
    const r = request({
      strategy: { kind: 'ma_cross', ma: 'sma', params: { fast: [50], slow: [10] } },
    });
    expect(refusal(() => checkGridRequest(r, 1000)).violations).toEqual([
      { path: 'strategy.params', problem: 'no_valid_combination' },
    ]);
  });
});
