import type { FlowRun, RunScope } from '@tda/contracts';
import { createRun } from '@tda/flow-engine';
import { seededRandom } from '@tda/flow-engine/testing';

export const ASOF = '2026-09-20T00:00:00Z';

/** A small grid on the bundled BTC-USDT 1h data: 6 base variants × 8 executions. */
export const SMALL_SCOPE: RunScope = {
  symbol: 'BTC-USDT',
  asOf: ASOF,
  timeframe: '1h',
  bars: 600,
  strategy: { kind: 'ma_cross', ma: 'ema', params: { fast: [5, 10, 20], slow: [30, 50] } },
  execution: { direction: ['long_only', 'long_short'], stopLossPct: [0, 2], takeProfitPct: [0, 5] },
  top_k: 5,
  preselect: 4,
  top_trades_n: 2,
};

/** A backtest_v1 run whose step is RUNNING under `owner` (claim 1, lease far in the future). */
export function runningBacktestRun(scope: RunScope = SMALL_SCOPE, owner = 'test-worker'): FlowRun {
  const run = createRun({
    flowKey: 'backtest_v1',
    scope,
    ownerId: 'user-1',
    trigger: { type: 'USER', source: 'test' },
    now: new Date('2026-09-21T00:00:00Z'),
    random: seededRandom(7),
  });
  const [stepId, step] = Object.entries(run.steps)[0] ?? [];
  if (stepId === undefined || step === undefined) throw new Error('backtest_v1 built no step');
  run.status = 'RUNNING';
  run.steps[stepId] = {
    ...step,
    status: 'RUNNING',
    attempt: 1,
    lease: { owner, expiresAt: '2099-01-01T00:00:00.000Z' },
  };
  return run;
}
