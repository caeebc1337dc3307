import {
  baseVariants,
  computeSignals,
  expandedVariants,
  IndicatorCache,
  simulateVariant,
  toCandleArrays,
  type GridRequest,
} from '@tda/backtest';
import { validate, type BacktestSnapshot, type FlowRun, type RunScope } from '@tda/contracts';
import { BundledCandleSource } from '@tda/market-data';
import type { ApiError, BacktestJobRequest } from '@tda/service-cli';
import { expectEventually, rejectionOf } from '@tda/test-support';
import { DEFAULT_HARNESS_POLICY, stepArtifactUri } from '@tda/worker-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startE2eStack, type E2eStack } from './testing/e2e-stack';

/**
 * Backtest jobs (seed 003) end to end on the emulators: flow backtest_v1 → the BACKTEST worker
 * of the local stack, progress in the step, best-so-far in the step's checkpoint, the result
 * artifact equal to a brute-force ranking, and a cancel honoured mid stage B.
 */

const AS_OF = '2026-09-20T00:00:00Z';
const STEP = 'backtest:1h';
const ARTIFACTS = {
  bucket: DEFAULT_HARNESS_POLICY.artifactBucket,
  prefix: DEFAULT_HARNESS_POLICY.artifactPrefix,
};
const range = (from: number, n: number, step = 1) =>
  Array.from({ length: n }, (_, i) => from + i * step);

/** 100 base variants × 100 executions = 10,000 variants, every base shortlisted. */
const GRID: RunScope = {
  symbol: 'BTC-USDT',
  asOf: AS_OF,
  timeframe: '1h',
  bars: 5_000,
  strategy: { kind: 'ma_cross', ma: 'ema', params: { fast: range(3, 10), slow: range(20, 10, 5) } },
  execution: {
    direction: ['long_only', 'long_short'],
    stopLossPct: [0, 1, 2, 3, 5],
    takeProfitPct: [0, 2, 4, 8, 16],
    trailingStopPct: [0, 3],
  },
  top_k: 10,
  preselect: 100,
  top_trades_n: 3,
};

async function readCheckpoint(h: E2eStack, runId: string): Promise<BacktestSnapshot | null> {
  const doc = await h.stack.backends.checkpoints.readCheckpoint(runId, STEP);
  if (doc === null) return null;
  const checked = validate.backtestSnapshot(doc);
  if (!checked.ok) throw new Error(`invalid snapshot: ${JSON.stringify(checked.issues)}`);
  return checked.value;
}

/** Every variant of a resolved scope scored and sorted by the seed's rule: the top-K reference. */
async function bruteForceTop(scope: RunScope, k: number): Promise<string[]> {
  const series = await new BundledCandleSource().fetchCandles({
    symbol: 'BTC-USDT',
    timeframe: '1h',
    limit: scope['bars'] as number,
    asOf: Date.parse(AS_OF),
    incompleteBucketPolicy: 'dropped',
  });
  const candles = toCandleArrays(series.candles, 3_600_000);
  const cache = new IndicatorCache(candles);
  const signals = new Int8Array(candles.length);
  const grid = scope as unknown as GridRequest;
  const scored: { key: string; r: number }[] = [];
  for (const base of baseVariants(grid.strategy)) {
    computeSignals(cache, base.spec, signals);
    for (const v of expandedVariants(grid.execution, base)) {
      const { metrics } = simulateVariant(candles, signals, v.execution);
      scored.push({ key: v.variant_key, r: metrics.total_return_pct });
    }
  }
  scored.sort((a, b) => b.r - a.r || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return scored.slice(0, k).map((s) => s.key);
}

describe('backtest jobs end to end (emulators)', () => {
  let h: E2eStack;
  beforeAll(async () => {
    h = await startE2eStack({
      name: 'backtest',
      env: {
        TDA_BACKTEST_BATCH_SIZE: '200',
        TDA_BACKTEST_SNAPSHOT_SECONDS: '0',
        TDA_BACKTEST_SNAPSHOT_VARIANTS_STEP: '1000',
      },
      // Cancel and progress are seen by heartbeats: a short period keeps the test short.
      hooks: { workerPolicy: { heartbeatMs: 200, leaseMs: 5_000 } },
    });
  });
  afterAll(async () => {
    await h?.stack.close();
  });

  it('a 10,000-variant grid succeeds with progress on the way and the brute-force top-K', async () => {
    const { job } = await h.api.createBacktestJob(GRID as unknown as BacktestJobRequest);
    const created = { runId: job.job_id };
    const seen = new Set<string>();
    const run: FlowRun = await expectEventually(
      async () => {
        const current = await h.api.getRun(created.runId);
        const progress = current.steps[STEP]?.progress;
        if (progress !== undefined) seen.add(progress.stage);
        const top = await h.api.backtestTop(created.runId, 3);
        if (top.source === 'best_so_far' && (top.processed_units ?? 0) < (top.total_units ?? 0)) {
          seen.add('best-so-far');
        }
        expect(current.status).toBe('SUCCEEDED');
        return current;
      },
      { timeoutMs: 120_000, intervalMs: 50 },
    );
    expect([...seen]).toEqual(expect.arrayContaining(['stage_b', 'best-so-far']));
    const step = run.steps[STEP];
    const result = validate.backtestResult(
      JSON.parse((await h.stack.backends.artifacts.read(step?.outputs.gcs_uri ?? '')).toString()),
    );
    if (!result.ok) throw new Error('invalid backtest_result');
    expect(result.value.counts.gridVariants).toBe(10_000);
    expect(result.value.top.map((v) => v.variant_key)).toEqual(await bruteForceTop(run.scope, 10));
    expect(result.value.top.every((v) => v.report_table_md.startsWith('| field | value |'))).toBe(
      true,
    );
    expect(result.value.top.map((v) => v.trades !== null)).toEqual([
      ...Array<boolean>(3).fill(true),
      ...Array<boolean>(7).fill(false),
    ]);
    const snapshot = await readCheckpoint(h, run.runId);
    expect(snapshot).toMatchObject({ stage: 'stage_b', processedUnits: 10_000, attempt: 1 });
    // The jobs API: succeeded, the result with report tables and trades for the top_trades_n best.
    expect(await h.api.getBacktestJob(run.runId)).toMatchObject({ state: 'succeeded' });
    const top = await h.api.backtestTop(run.runId);
    expect(top).toMatchObject({ source: 'result', state: 'succeeded' });
    expect(top.items.map((i) => i.variant_key)).toEqual(result.value.top.map((v) => v.variant_key));
    expect(top.items.filter((i) => i.trades !== undefined)).toHaveLength(3);
  }, 150_000);

  it('a cancel mid stage B ends CANCELLED at a batch boundary, without a result', async () => {
    const big = { ...GRID, execution: { ...(GRID['execution'] as object), feeBps: range(0, 10) } };
    const { job } = await h.api.createBacktestJob(big as unknown as BacktestJobRequest);
    const created = { runId: job.job_id };
    // Running in stage B: its progress is in the run (heartbeat) and its best-so-far is kept.
    await expectEventually(
      async () => {
        const current = await h.api.getRun(created.runId);
        expect(current.steps[STEP]?.progress?.stage).toBe('stage_b');
        const snapshot = await readCheckpoint(h, created.runId);
        expect(snapshot?.stage).toBe('stage_b');
        expect(snapshot?.processedUnits).toBeGreaterThan(0);
      },
      { timeoutMs: 60_000, intervalMs: 20 },
    );
    expect((await h.api.cancelBacktestJob(created.runId)).state).toBe('cancelled');
    const run = await expectEventually(
      async () => {
        const current = await h.api.getRun(created.runId);
        expect(current.steps[STEP]?.status).toBe('CANCELLED');
        return current;
      },
      { timeoutMs: 30_000, intervalMs: 50 },
    );
    expect(run.status).toBe('CANCELLED');
    // Cancelled: the last best-so-far, never a report.
    const top = await h.api.backtestTop(run.runId);
    expect(top.source).toBe('best_so_far');
    expect(top.items.every((i) => i.report_table_md === undefined)).toBe(true);
    const step = run.steps[STEP];
    expect(step?.outputs.gcs_uri).toBeUndefined();
    expect(step?.progress?.stage).toBe('stage_b');
    expect(step?.progress?.processedUnits ?? 0).toBeLessThan(100_000);
    const uri = stepArtifactUri(
      { ...ARTIFACTS, runId: run.runId, stepId: STEP, timeframe: '1h' },
      DEFAULT_HARNESS_POLICY.primaryArtifactSuffix,
    );
    expect(await h.stack.backends.artifacts.exists(uri)).toBe(false);
  }, 120_000);
  it('refuses a grid beyond the guards (422, every violation) and a job past the quota (429)', async () => {
    const tooMuch = { ...GRID, top_k: 500, top_trades_n: 600 } as unknown as BacktestJobRequest;
    const refused = await rejectionOf(h.api.createBacktestJob(tooMuch));
    expect(refused).toMatchObject({ status: 422, code: 'VALIDATION_FAILED' });
    const problems = ((refused as ApiError).details['violations'] as { path: string }[]).map(
      (v) => v.path,
    );
    expect(problems).toEqual(expect.arrayContaining(['top_k', 'top_trades_n']));
    // Three active jobs (the default TDA_BACKTEST_MAX_ACTIVE_JOBS_PER_OWNER): one running on the
    // stack's single worker, two waiting for it; a fourth is refused and nothing is created.
    const big = { ...GRID, execution: { ...(GRID['execution'] as object), feeBps: range(0, 10) } };
    const jobs = [];
    for (let i = 0; i < 3; i += 1) {
      jobs.push((await h.api.createBacktestJob(big as unknown as BacktestJobRequest)).job.job_id);
    }
    const before = (await h.api.listBacktestJobs({ limit: 100 })).items.length;
    expect(
      await rejectionOf(h.api.createBacktestJob(big as unknown as BacktestJobRequest)),
    ).toMatchObject({
      status: 429,
      code: 'QUOTA_EXCEEDED',
    });
    expect((await h.api.listBacktestJobs({ limit: 100 })).items).toHaveLength(before);
    for (const id of jobs) await h.api.cancelBacktestJob(id);
    for (const id of jobs) {
      await expectEventually(
        async () => expect((await h.api.getBacktestJob(id)).state).toBe('cancelled'),
        { timeoutMs: 30_000 },
      );
    }
  }, 120_000);
});
