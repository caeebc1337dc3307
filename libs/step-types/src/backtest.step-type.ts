import { validate, type BacktestResult } from '@tda/contracts';
import { DEFAULT_STEP_POLICY } from '@tda/flow-engine';
import { defineStepType } from './step-type.descriptor';

/** Seed 003 order: total_return_pct desc, then variant_key asc. */
function ranksBefore(a: BacktestResult['top'][number], b: BacktestResult['top'][number]): boolean {
  const ra = a.metrics.total_return_pct;
  const rb = b.metrics.total_return_pct;
  return ra > rb || (ra === rb && a.variant_key < b.variant_key);
}

/**
 * What backtest_result.schema.json cannot say: ranks 1..n in the seed's order, unique variant
 * keys, `counts.persisted` = the list's length, trades on a prefix of the ranking only
 * (top_trades_n best), data.firstOpenTime ≤ lastOpenTime ≤ asOf.
 */
export function backtestResultProblem(result: BacktestResult): string | undefined {
  const { top, data } = result;
  if (result.counts.persisted !== top.length) return 'counts.persisted is not top.length';
  if (!(data.firstOpenTime <= data.lastOpenTime && data.lastOpenTime <= result.asOf)) {
    return 'data window is not ordered before asOf';
  }
  let tradesEnded = false;
  for (const [i, variant] of top.entries()) {
    if (variant.rank !== i + 1) return `top[${i}].rank is not ${i + 1}`;
    const previous = top[i - 1];
    if (previous !== undefined && !ranksBefore(previous, variant)) {
      return `top[${i}] is not ranked after top[${i - 1}] (total_return_pct desc, variant_key asc)`;
    }
    if (variant.trades === null) tradesEnded = true;
    else if (tradesEnded) return `top[${i}] has trades after a variant without`;
  }
  return undefined;
}

/**
 * BACKTEST (flow backtest_v1, seed 003 backtest job): a strategy grid over the newest candles by
 * asOf — stage A shortlist, stage B with a running top-K, finalizing with the detailed scorer.
 * Best-so-far results go to the step's checkpoint (backtest_snapshot), fenced by the lease.
 */
export const BACKTEST_STEP = defineStepType({
  stepType: 'BACKTEST',
  service: 'worker-backtest',
  description:
    'Backtest job (seed 003): a strategy × risk/execution grid on one symbol and timeframe; progress and best-so-far while running, top variants with report tables and trades.',
  inputsContract: 'backtest_inputs',
  inputs: validate.backtestInputs,
  artifact: {
    contract: 'backtest_result',
    validate: validate.backtestResult,
    identity: (a) => ({ runId: a.runId, stepId: a.stepId, timeframe: a.timeframe }),
    check: backtestResultProblem,
  },
  checkpoint: { contract: 'backtest_snapshot', validate: validate.backtestSnapshot },
  upstream: {},
  // A 600,000-variant grid over 100,000 bars is minutes of CPU; 30 minutes bounds a stuck job.
  // One in-process try: a job is not retried in the same delivery (a reclaim restarts it).
  policy: {
    ...DEFAULT_STEP_POLICY,
    timeoutMs: 30 * 60_000,
    retry: { ...DEFAULT_STEP_POLICY.retry, tries: 1 },
  },
  deploy: {
    kind: 'WorkerPool',
    why:
      'BACKTEST jobs are CPU-bound for minutes (up to the 30-minute step timeout): an always-on ' +
      'Worker Pool pulling its subscription keeps its CPU for the whole job, is bound by no ' +
      'request timeout, and scales out by replicas, each running one job at a time (seed 003: ' +
      'parallelism 1 inside a job by default, more replicas for more users).',
    cpu: '2',
    memory: '2Gi',
    minInstances: 1,
    maxInstances: 4,
  },
});
