import { InMemoryArtifactStore } from '@tda/artifacts';
import { finalize, runStageA, runStageB, toCandleArrays, type GridRequest } from '@tda/backtest';
import { validate, type BacktestSnapshot, type FlowRun } from '@tda/contracts';
import { InMemoryFlowRunStore } from '@tda/flow-store';
import { BundledCandleSource } from '@tda/market-data';
import { createLogger } from '@tda/observability';
import { BACKTEST_STEP, backtestResultProblem } from '@tda/step-types';
import { requireHandlerContext } from '@tda/worker-kit/testing';
import { describe, expect, it } from 'vitest';
import { BacktestHandler } from './backtest.handler';
import { runningBacktestRun } from './testing/backtest-fixtures';

const STEP = 'backtest:1h';
const logger = createLogger({ service: 'worker-backtest', level: 'silent' });
const settings = { batchSize: 5, parallelWorkers: 1, snapshotMs: 0, variantsStep: 1 };

async function setup(run: FlowRun = runningBacktestRun()) {
  const store = new InMemoryFlowRunStore();
  await store.create(run);
  const beats: { stage: string; processedUnits?: number; totalUnits?: number }[] = [];
  const context = requireHandlerContext(BACKTEST_STEP, {
    run,
    stepId: STEP,
    artifacts: new InMemoryArtifactStore(),
    checkpoints: store,
    heartbeat: (p) => {
      if (p !== undefined) beats.push(p);
    },
  });
  const handler = new BacktestHandler({ candles: new BundledCandleSource(), logger, settings });
  return { store, context, beats, handler };
}

async function snapshotOf(store: InMemoryFlowRunStore, run: FlowRun): Promise<BacktestSnapshot> {
  const checked = validate.backtestSnapshot(await store.readCheckpoint(run.runId, STEP));
  if (!checked.ok) throw new Error('no valid snapshot');
  return checked.value;
}

/** The same job through the library's synchronous stages: what the worker must reproduce. */
async function reference(run: FlowRun) {
  const inputs = run.steps[STEP]?.inputs as unknown as GridRequest & { bars: number };
  const series = await new BundledCandleSource().fetchCandles({
    symbol: 'BTC-USDT',
    timeframe: '1h',
    limit: inputs.bars,
    asOf: Date.parse(run.scope.asOf ?? ''),
    incompleteBucketPolicy: 'dropped',
  });
  const candles = toCandleArrays(series.candles, 3_600_000);
  const a = runStageA(candles, inputs);
  const b = runStageB(candles, inputs, a.shortlist);
  return finalize(candles, inputs, b.top);
}

describe('BacktestHandler', () => {
  it('runs stage A, stage B and finalizing to the library reference, reporting on the way', async () => {
    const { store, context, beats, handler } = await setup();
    const result = await handler.execute(context);
    const artifact = validate.backtestResult(JSON.parse(String(result.artifacts[0]?.data)));
    if (!artifact.ok) throw new Error(JSON.stringify(artifact.issues));
    expect(backtestResultProblem(artifact.value)).toBeUndefined();
    const expected = await reference(context.run);
    expect(artifact.value.top.map((v) => [v.variant_key, v.metrics])).toEqual(
      expected.map((v) => [v.variant_key, v.metrics]),
    );
    expect(artifact.value.top.map((v) => v.trades !== null)).toEqual([
      true,
      true,
      false,
      false,
      false,
    ]);
    expect(artifact.value.counts).toEqual({
      baseVariants: 6,
      executionVariants: 8,
      gridVariants: 48,
      preselectUsed: 4,
      stageBVariants: 32,
      persisted: 5,
    });
    expect(artifact.value.data.bars).toBe(600);
    expect(artifact.value.data.lastOpenTime < '2026-09-20T00:00:00Z').toBe(true);
    expect(artifact.value.hashes).toEqual(context.inputs.hashes);
    // Progress per stage as seed 003 defines the units, in order.
    const stages = [...new Set(beats.map((b) => b.stage))];
    expect(stages).toEqual(['stage_a', 'stage_b', 'finalizing']);
    expect(beats.filter((b) => b.stage === 'stage_a').at(-1)).toEqual({
      stage: 'stage_a',
      processedUnits: 6,
      totalUnits: 6,
    });
    expect(beats.at(-1)).toEqual({ stage: 'finalizing', processedUnits: 1, totalUnits: 1 });
    const snapshot = await snapshotOf(store, context.run);
    expect(snapshot).toMatchObject({ stage: 'stage_b', processedUnits: 32, totalUnits: 32 });
    expect(snapshot.top.map((v) => v.variant_key)).toEqual(expected.map((v) => v.variant_key));
  });

  it('a cancel mid stage B stops at the next batch boundary: no artifact, best-so-far kept', async () => {
    const controller = new AbortController();
    const run = runningBacktestRun();
    const { store, beats, handler } = await setup(run);
    const context = requireHandlerContext(BACKTEST_STEP, {
      run,
      stepId: STEP,
      artifacts: new InMemoryArtifactStore(),
      checkpoints: store,
      signal: controller.signal,
      heartbeat: (p) => {
        if (p === undefined) return;
        beats.push(p);
        if (p.stage === 'stage_b' && (p.processedUnits ?? 0) >= 10) {
          controller.abort({ kind: 'cancelled' });
        }
      },
    });
    await expect(handler.execute(context)).rejects.toEqual({ kind: 'cancelled' });
    const last = beats.at(-1);
    expect(last).toMatchObject({ stage: 'stage_b', processedUnits: 10, totalUnits: 32 });
    const snapshot = await snapshotOf(store, run);
    expect(snapshot.stage).toBe('stage_b');
    expect(snapshot.processedUnits).toBeLessThan(32);
  });

  it('a worker that lost its lease writes no snapshot and stops (fenced)', async () => {
    const run = runningBacktestRun(undefined, 'another-worker');
    const { store, context, handler } = await setup(run);
    await expect(handler.execute(context)).rejects.toEqual({ kind: 'lease_lost' });
    expect(context.signal.aborted).toBe(true);
    expect(await store.readCheckpoint(run.runId, STEP)).toBeNull();
  });
});
