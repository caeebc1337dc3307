import { backtestRuntimeConfigHash, DEFAULT_BACKTEST_RUNTIME } from '@tda/backtest';
import { isTdaError, validate, type RunScope } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import { createRun } from './flow-catalogue';
import { seededRandom } from '../testing/run-fixtures';
import { createBacktestFlow } from './backtest.flow';

const STRATEGY = { kind: 'ma_cross', ma: 'sma', params: { fast: [5, 10], slow: [20, 50] } };
const SCOPE: RunScope = { symbol: 'BTC-USDT', asOf: '2026-09-20T00:00:00Z', strategy: STRATEGY };

function refusal(call: () => unknown): { code: string; details?: Record<string, unknown> } {
  try {
    call();
  } catch (error) {
    if (isTdaError(error)) return { code: error.code, details: error.details };
    throw error;
  }
  throw new Error('expected a refusal');
}

function run(scope: RunScope) {
  return createRun({
    flowKey: 'backtest_v1',
    scope,
    ownerId: 'user-1',
    trigger: { type: 'USER', source: 'test' },
    now: new Date('2026-09-21T00:00:00Z'),
    random: seededRandom(3),
  });
}

describe('flow backtest_v1', () => {
  it('fills the runtime defaults and builds one BACKTEST step with the three hashes', () => {
    const built = run(SCOPE);
    expect(built.scope).toMatchObject({
      timeframe: '1h',
      bars: 5_000,
      top_k: 20,
      preselect: 200,
      top_trades_n: 3,
      execution: DEFAULT_BACKTEST_RUNTIME.execution,
    });
    const step = built.steps['backtest:1h'];
    expect(step?.stepType).toBe('BACKTEST');
    const inputs = validate.backtestInputs(step?.inputs);
    if (!inputs.ok) throw new Error(JSON.stringify(inputs.issues));
    expect(inputs.value.topKPersistedDefault).toBe(100);
    expect(inputs.value.hashes.backtest_runtime_config_hash).toBe(
      backtestRuntimeConfigHash(DEFAULT_BACKTEST_RUNTIME),
    );
  });

  it('request_hash covers what changes a result (asOf included); the same request hashes the same', () => {
    const hashes = (scope: RunScope) => run(scope).steps['backtest:1h']?.inputs['hashes'];
    expect(hashes(SCOPE)).toEqual(hashes({ ...SCOPE }));
    const other = hashes({ ...SCOPE, asOf: '2026-09-19T00:00:00Z' }) as Record<string, string>;
    const base = hashes(SCOPE) as Record<string, string>;
    expect(other['request_hash']).not.toBe(base['request_hash']);
    expect(other['engine_params_hash']).toBe(base['engine_params_hash']);
    const fees = hashes({ ...SCOPE, execution: { feeBps: [0] } }) as Record<string, string>;
    expect(fees['engine_params_hash']).not.toBe(base['engine_params_hash']);
  });

  it('a guard change leaves backtest_runtime_config_hash alone; a default change does not', () => {
    const guards = { ...DEFAULT_BACKTEST_RUNTIME.guards, maxVariants: 10 };
    const hashOf = (flow: ReturnType<typeof createBacktestFlow>) =>
      (
        flow.build(SCOPE, { runId: 'x', createdAt: 'y' })['backtest:1h']?.inputs as {
          hashes: Record<string, string>;
        }
      ).hashes['backtest_runtime_config_hash'];
    const base = hashOf(createBacktestFlow());
    expect(hashOf(createBacktestFlow({ ...DEFAULT_BACKTEST_RUNTIME, guards }))).toBe(base);
    const defaults = { ...DEFAULT_BACKTEST_RUNTIME.defaults, top_k: 10 };
    expect(hashOf(createBacktestFlow({ ...DEFAULT_BACKTEST_RUNTIME, defaults }))).not.toBe(base);
  });

  it('refuses every broken rule at once in one deterministic VALIDATION_FAILED payload', () => {
    const scope = {
      ...SCOPE,
      timeframe: '2h',
      bars: 10,
      strategy: { kind: 'ma_cross', params: { fast: [], slow: [20] }, extra: 1 },
      execution: { feeBps: [-1], leverage: [2] },
      top_k: 101,
      top_trades_n: 5,
    };
    const first = refusal(() => run(scope));
    expect(first).toEqual(refusal(() => run(scope)));
    expect(first.code).toBe('VALIDATION_FAILED');
    expect(first.details?.['violations']).toEqual([
      { path: 'timeframe', problem: 'invalid_value', values: ['1h', '4h', '1d', '1w', '1M'] },
      { path: 'bars', problem: 'invalid_value' },
      { path: 'strategy', problem: 'unknown_fields', values: ['extra'] },
      { path: 'execution', problem: 'unknown_fields', values: ['leverage'] },
      { path: 'strategy.ma', problem: 'invalid_value' },
      { path: 'strategy.params.fast', problem: 'empty_list' },
      { path: 'execution.feeBps', problem: 'invalid_values', values: [-1] },
      { path: 'top_k', problem: 'above_limit', limit: 100, actual: 101 },
    ]);
  });

  it('refuses a grid above 600,000 variants at creation, before anything runs', () => {
    const wide = {
      kind: 'bollinger_breakout',
      params: { period: Array.from({ length: 1000 }, (_, i) => i + 2), k: [1, 2, 3, 4] },
    };
    const execution = {
      stopLossPct: Array.from({ length: 100 }, (_, i) => i / 10),
      takeProfitPct: [0, 5],
    };
    expect(refusal(() => run({ ...SCOPE, strategy: wide, execution })).details).toEqual({
      violations: [{ path: 'variants', problem: 'above_limit', limit: 600_000, actual: 800_000 }],
    });
  });
});
