import { TIMEFRAMES, type BacktestInputs, type RunScope, type Timeframe } from '@tda/contracts';
import {
  BacktestGridInvalidError,
  backtestRuntimeConfigHash,
  checkGridRequest,
  DEFAULT_BACKTEST_RUNTIME,
  EXECUTION_FIELDS,
  engineParamsHash,
  gridLimitsOf,
  gridRequestOf,
  requestHash,
  type BacktestRuntimeConfig,
  type ExecutionGrid,
  type GridRequest,
  type GridStrategy,
  type GridViolation,
} from '@tda/backtest';
import type { FlowDefinition } from './flow-definition';
import { scopeSchema, type ScopeSchema } from './scope-schema';
import { assertKnownKeys, readSymbol, withAsOf } from './scope';

export const BACKTEST_FLOW_KEY = 'backtest_v1';
const SCOPE_FIELDS = [
  'symbol',
  'asOf',
  'timeframe',
  'bars',
  'strategy',
  'execution',
  'top_k',
  'preselect',
  'top_trades_n',
] as const;
const DEFAULT_TIMEFRAME: Timeframe = '1h';
const EXAMPLE_STRATEGY = {
  kind: 'ma_cross',
  ma: 'ema',
  params: { fast: [5, 10, 20], slow: [50, 100, 200] },
};

function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function unknownKeys(
  value: Record<string, unknown>,
  allowed: readonly string[],
  path: string,
  out: GridViolation[],
): void {
  const extra = Object.keys(value)
    .filter((k) => !allowed.includes(k))
    .sort();
  if (extra.length > 0) out.push({ path, problem: 'unknown_fields', values: extra });
}

/** The strategy part as given; shape problems become violations, never exceptions. */
function readStrategy(raw: unknown, out: GridViolation[]): GridStrategy {
  const value = asObject(raw) ?? {};
  unknownKeys(value, ['kind', 'ma', 'params'], 'strategy', out);
  const strategy = {
    kind: String(value['kind'] ?? ''),
    params: (asObject(value['params']) ?? {}) as Record<string, number[]>,
  } as GridStrategy;
  if (value['ma'] !== undefined) strategy.ma = value['ma'] as GridStrategy['ma'];
  return strategy;
}

/** Every execution list the request leaves out is the runtime default. */
function readExecution(
  raw: unknown,
  runtime: BacktestRuntimeConfig,
  out: GridViolation[],
): ExecutionGrid {
  const value = asObject(raw) ?? {};
  if (raw !== undefined && asObject(raw) === undefined) {
    out.push({ path: 'execution', problem: 'invalid_value' });
  }
  unknownKeys(value, EXECUTION_FIELDS, 'execution', out);
  const grid = { ...runtime.execution };
  for (const field of EXECUTION_FIELDS) {
    if (value[field] !== undefined) (grid as Record<string, unknown>)[field] = value[field];
  }
  return grid;
}

function readBars(scope: RunScope, runtime: BacktestRuntimeConfig, out: GridViolation[]): number {
  const raw = scope['bars'] ?? runtime.defaults.bars;
  const max = runtime.guards.maxBars;
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 50) {
    out.push({ path: 'bars', problem: 'invalid_value' });
  } else if (raw > max) {
    out.push({ path: 'bars', problem: 'above_limit', limit: max, actual: raw });
  }
  return typeof raw === 'number' ? raw : runtime.defaults.bars;
}

function readTimeframe(scope: RunScope, out: GridViolation[]): Timeframe {
  const raw = scope['timeframe'] ?? DEFAULT_TIMEFRAME;
  if (!(TIMEFRAMES as readonly unknown[]).includes(raw)) {
    out.push({ path: 'timeframe', problem: 'invalid_value', values: [...TIMEFRAMES] });
    return DEFAULT_TIMEFRAME;
  }
  return raw as Timeframe;
}

/**
 * The job request of a scope with the runtime defaults applied, checked against every guard of
 * seed 003 at once: one VALIDATION_FAILED (422) listing all violations in a fixed order.
 */
export function resolveBacktestScope(scope: RunScope, runtime: BacktestRuntimeConfig): RunScope {
  assertKnownKeys(scope, SCOPE_FIELDS);
  const symbol = readSymbol(scope);
  const out: GridViolation[] = [];
  const timeframe = readTimeframe(scope, out);
  const bars = readBars(scope, runtime, out);
  const request: GridRequest = {
    strategy: readStrategy(scope['strategy'], out),
    execution: readExecution(scope['execution'], runtime, out),
    top_k: (scope['top_k'] ?? runtime.defaults.top_k) as number,
    preselect: (scope['preselect'] ?? runtime.defaults.preselect) as number,
    top_trades_n: (scope['top_trades_n'] ?? runtime.defaults.top_trades_n) as number,
  };
  try {
    checkGridRequest(request, bars, gridLimitsOf(runtime));
  } catch (error) {
    if (!(error instanceof BacktestGridInvalidError)) throw error;
    out.push(...error.violations);
  }
  if (out.length > 0) throw new BacktestGridInvalidError(out);
  return withAsOf({ symbol, timeframe, bars, ...structuredClone(request) } as RunScope, scope);
}

/** The effective request of a resolved scope (what request_hash covers). */
function effectiveRequest(scope: RunScope): Record<string, unknown> {
  const fields = ['symbol', 'timeframe', 'asOf', 'bars', ...Object.keys(gridOf(scope))];
  return Object.fromEntries(fields.flatMap((f) => (f in scope ? [[f, scope[f]]] : [])));
}

type InputsGrid = Pick<
  BacktestInputs,
  'strategy' | 'execution' | 'top_k' | 'preselect' | 'top_trades_n'
>;

/** A checked grid as step inputs (checkGridRequest refused empty lists before this). */
function inputsGrid(grid: GridRequest): InputsGrid {
  return grid as unknown as InputsGrid;
}

/** A resolved scope holds a checked grid (resolveBacktestScope). */
function gridOf(scope: RunScope): GridRequest {
  return gridRequestOf(scope as unknown as GridRequest);
}

function backtestScopeSchema(runtime: BacktestRuntimeConfig): ScopeSchema {
  const schema = scopeSchema(['symbol', 'asOf'], { required: ['symbol', 'strategy'] });
  const integer = (title: string, minimum: number, maximum: number, dflt: number) => ({
    type: 'integer',
    title,
    minimum,
    maximum,
    default: dflt,
  });
  const { defaults } = runtime;
  Object.assign(schema.properties, {
    timeframe: { type: 'string', title: 'Timeframe', enum: [...TIMEFRAMES], default: '1h' },
    bars: integer('Bars (newest by asOf)', 50, runtime.guards.maxBars, defaults.bars),
    strategy: {
      type: 'object',
      title: 'Strategy grid (stage A)',
      description:
        'kind ma_cross {fast, slow} (ma ema|sma) | rsi_reversion {period, lower, upper} | bollinger_breakout {period, k} | macd_cross {fast, slow, signal}; each parameter a list of values',
      required: ['kind', 'params'],
      examples: [EXAMPLE_STRATEGY],
    },
    execution: {
      type: 'object',
      title: 'Execution grid (each list optional)',
      default: runtime.execution,
    },
    top_k: integer('Top K', 1, runtime.reporting.topKPersistedDefault, defaults.top_k),
    preselect: integer('Preselect (stage A)', 1, 100_000, defaults.preselect),
    top_trades_n: integer('Variants with trades', 0, 1_000, defaults.top_trades_n),
  });
  return schema;
}

/**
 * Flow `backtest_v1` (seed 003 backtest job): one BACKTEST step over the newest `bars` candles of
 * one symbol and timeframe by asOf. The scope is the job request; the step's inputs are the
 * effective request with the persisted cap and the three hashes, fixed at creation.
 */
export function createBacktestFlow(
  runtime: BacktestRuntimeConfig = DEFAULT_BACKTEST_RUNTIME,
): FlowDefinition {
  const resolve = (scope: RunScope) => resolveBacktestScope(scope, runtime);
  return {
    flowKey: BACKTEST_FLOW_KEY,
    description:
      'Backtest a strategy grid (MA cross, RSI reversion, Bollinger breakout, MACD cross × risk/execution) on one symbol and timeframe; top variants with report tables and trades.',
    scopeSchema: backtestScopeSchema(runtime),
    resolveScope: resolve,
    needs: (scope) => ({
      marketData: [{ symbol: scope.symbol, timeframe: scope['timeframe'] as Timeframe }],
    }),
    build(scope) {
      const resolved = resolve(scope);
      const timeframe = resolved['timeframe'] as Timeframe;
      const grid = gridOf(resolved);
      return {
        [`backtest:${timeframe}`]: {
          stepType: 'BACKTEST',
          timeframe,
          dependsOn: [],
          inputs: {
            symbol: resolved.symbol,
            timeframe,
            bars: resolved['bars'] as number,
            ...inputsGrid(grid),
            topKPersistedDefault: runtime.reporting.topKPersistedDefault,
            hashes: {
              request_hash: requestHash(effectiveRequest(resolved)),
              engine_params_hash: engineParamsHash(grid.execution),
              backtest_runtime_config_hash: backtestRuntimeConfigHash(runtime),
            },
          },
        },
      };
    },
  };
}

export const backtestFlow = createBacktestFlow();
