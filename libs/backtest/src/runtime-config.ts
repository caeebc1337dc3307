import type { ExecutionGrid, GridRequest } from './grid';
import { DEFAULT_GRID_LIMITS, type GridLimits } from './grid-guards';
import { canonicalJson, sha256Hex } from './grid-hash';

/**
 * The backtest runtime settings (seed 003 `backtest` config): request defaults, execution
 * defaults, the reporting cap, and the guards. Only `defaults`, `execution` and `reporting` change
 * a result; the guards only refuse requests.
 */
export interface BacktestRuntimeConfig {
  defaults: Pick<GridRequest, 'top_k' | 'preselect' | 'top_trades_n'> & { bars: number };
  /** What an execution list the request leaves out becomes (the first value is stage A's). */
  execution: ExecutionGrid;
  reporting: { topKPersistedDefault: number };
  guards: Pick<GridLimits, 'maxVariants' | 'maxComputeBytes'> & { maxBars: number };
}

export const DEFAULT_BACKTEST_RUNTIME: BacktestRuntimeConfig = {
  defaults: { bars: 5_000, top_k: 20, preselect: 200, top_trades_n: 3 },
  execution: {
    direction: ['long_only'],
    fraction: [1],
    feeBps: [10],
    slippageBps: [5],
    stopLossPct: [0],
    takeProfitPct: [0],
    trailingStopPct: [0],
  },
  reporting: { topKPersistedDefault: DEFAULT_GRID_LIMITS.topKPersistedDefault },
  guards: {
    maxVariants: DEFAULT_GRID_LIMITS.maxVariants,
    maxComputeBytes: DEFAULT_GRID_LIMITS.maxComputeBytes,
    maxBars: 100_000,
  },
};

/** The guards of checkGridRequest for this runtime. */
export function gridLimitsOf(runtime: BacktestRuntimeConfig): GridLimits {
  return {
    maxVariants: runtime.guards.maxVariants,
    maxComputeBytes: runtime.guards.maxComputeBytes,
    topKPersistedDefault: runtime.reporting.topKPersistedDefault,
  };
}

/**
 * backtest_runtime_config_hash: sha256 of the canonical JSON of the result-affecting sections only
 * (defaults, execution, reporting), so changing a guard does not change the hash of a result.
 */
export function backtestRuntimeConfigHash(runtime: BacktestRuntimeConfig): string {
  const { defaults, execution, reporting } = runtime;
  return sha256Hex(canonicalJson({ defaults, execution, reporting }));
}
