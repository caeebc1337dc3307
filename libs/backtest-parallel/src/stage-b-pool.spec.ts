import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import {
  IndicatorCache,
  runStageA,
  runStageB,
  toCandleArrays,
  type BaseScore,
  type CandleLike,
  type GridRequest,
  type Progress,
} from '@tda/backtest';
import { BacktestThreadError } from './backtest-parallel.errors';
import { defaultSpawn, type SpawnStageBThread } from './spawn';
import { mergeTops, planShards } from './merge';
import { runStageBParallel, StageBThreadPool } from './stage-b-pool';

const HOUR = 3_600_000;

/** A deterministic wavy series: enough crossings and stop hits for a meaningful ranking. */
function syntheticCandles(n: number): CandleLike[] {
  return Array.from({ length: n }, (_, i) => {
    const close = 100 + 10 * Math.sin(i / 17) + 4 * Math.sin(i / 5.3) + i * 0.01;
    const open = close - Math.sin(i / 3);
    return {
      openTime: i * HOUR,
      open,
      high: Math.max(open, close) + 1.5,
      low: Math.min(open, close) - 1.5,
      close,
      volume: 1,
    };
  });
}

const candles = toCandleArrays(syntheticCandles(600), HOUR);

const request: GridRequest = {
  strategy: { kind: 'ma_cross', ma: 'ema', params: { fast: [3, 5, 8], slow: [10, 20, 30] } },
  execution: {
    direction: ['long_only', 'long_short'],
    fraction: [1],
    feeBps: [10],
    slippageBps: [5],
    stopLossPct: [0, 1, 3],
    takeProfitPct: [0, 2],
    trailingStopPct: [0, 2],
  },
  top_k: 12,
  preselect: 9,
  top_trades_n: 0,
};

const shortlist = runStageA(candles, request).shortlist;

/** The default spawn, counting threads started and threads exited (leak check). */
function counted(spawn: SpawnStageBThread = defaultSpawn()) {
  const counts = { started: 0, exited: 0 };
  const wrapped: SpawnStageBThread = (data) => {
    const thread = spawn(data);
    counts.started++;
    thread.once('exit', () => counts.exited++);
    return thread;
  };
  return { counts, spawn: wrapped };
}

describe('runStageBParallel', () => {
  it('2 threads give exactly the serial result (top-K, metrics, progress)', async () => {
    const serial = runStageB(candles, request, shortlist, { batchSize: 10 });
    const reports: Progress[] = [];
    const { counts, spawn } = counted();
    const parallel = await runStageBParallel(candles, request, shortlist, {
      workers: 2,
      batchSize: 10,
      spawn,
      onBatch: (progress, best) => {
        reports.push(progress);
        expect(best.length).toBeLessThanOrEqual(12);
      },
    });
    expect(serial.progress.total).toBe(216);
    expect(parallel).toEqual(serial);
    expect(counts).toEqual({ started: 2, exited: 2 });
    const processed = reports.map((p) => p.processed);
    expect(processed).toEqual([...processed].sort((a, b) => a - b));
    expect(reports.at(-1)).toEqual({ processed: 216, total: 216 });
  });

  it('a kept pool runs jobs one after another (also after a cancel) on the same threads', async () => {
    const { counts, spawn } = counted();
    const pool = new StageBThreadPool({ threads: 2, spawn });
    try {
      await pool.warm();
      let reports = 0;
      const cancelled = await runStageBParallel(candles, request, shortlist, {
        pool,
        batchSize: 4,
        onBatch: () => reports++,
        isCancelled: () => reports > 0,
      });
      expect(cancelled.status).toBe('cancelled');
      const serial = runStageB(candles, request, shortlist, { batchSize: 7 });
      expect(await pool.run(candles, request, shortlist, { batchSize: 7 })).toEqual(serial);
      expect(await pool.run(candles, request, shortlist, { batchSize: 50 })).toEqual(
        runStageB(candles, request, shortlist, { batchSize: 50 }),
      );
      expect(counts).toEqual({ started: 2, exited: 0 });
    } finally {
      await pool.close();
    }
    expect(counts).toEqual({ started: 2, exited: 2 });
  });

  it('a kept pool whose thread died between jobs runs the next job on fresh threads', async () => {
    const threads: Worker[] = [];
    const { counts, spawn } = counted((data) => {
      const thread = defaultSpawn()(data);
      threads.push(thread);
      return thread;
    });
    const pool = new StageBThreadPool({ threads: 2, spawn });
    try {
      await pool.warm();
      await threads[0]?.terminate();
      const result = await pool.run(candles, request, shortlist);
      expect(result).toEqual(runStageB(candles, request, shortlist));
      expect(counts.started).toBe(4);
    } finally {
      await pool.close();
    }
    expect(counts).toEqual({ started: 4, exited: 4 });
  });

  it('workers = 1 runs inline (no thread) with the same result', async () => {
    const spawn: SpawnStageBThread = () => {
      throw new Error('no thread expected');
    };
    const inline = await runStageBParallel(candles, request, shortlist, {
      workers: 1,
      cache: new IndicatorCache(candles),
      spawn,
    });
    expect(inline).toEqual(runStageB(candles, request, shortlist));
  });

  it('cancel: threads stop at a batch boundary, status cancelled, every thread terminated', async () => {
    let reports = 0;
    const { counts, spawn } = counted();
    const result = await runStageBParallel(candles, request, shortlist, {
      workers: 2,
      batchSize: 4,
      spawn,
      onBatch: () => reports++,
      isCancelled: () => reports > 0,
    });
    expect(result.status).toBe('cancelled');
    expect(result.progress.processed).toBeGreaterThan(0);
    expect(result.progress.processed).toBeLessThan(216);
    expect(counts).toEqual({ started: 2, exited: 2 });
  });

  it('an engine error in a thread rejects with its code; threads are terminated', async () => {
    const broken: BaseScore[] = shortlist.map((b) => ({
      ...b,
      spec: { kind: 'ma_cross', ma: 'ema', fast: 30, slow: 10 },
    }));
    const { counts, spawn } = counted();
    const run = runStageBParallel(candles, request, broken, { workers: 2, spawn });
    await expect(run).rejects.toBeInstanceOf(BacktestThreadError);
    await expect(run).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      message: expect.stringMatching(/thread failed: fast must be below slow/),
    });
    expect(counts).toEqual({ started: 2, exited: 2 });
  });

  it('a thread that crashes on load rejects with INTERNAL_ERROR', async () => {
    const crash: SpawnStageBThread = (data) =>
      new Worker('throw new Error("boom at load")', { eval: true, workerData: data });
    const { counts, spawn } = counted(crash);
    const run = runStageBParallel(candles, request, shortlist, { workers: 2, spawn });
    await expect(run).rejects.toMatchObject({
      code: 'INTERNAL_ERROR',
      message: expect.stringMatching(/boom at load/),
    });
    expect(counts).toEqual({ started: 2, exited: 2 });
  });

  it('runStageB on two unit ranges covers the whole stage; a range out of bounds is refused', () => {
    const whole = runStageB(candles, request, shortlist);
    const head = runStageB(candles, request, shortlist, { units: { from: 0, to: 100 } });
    const tail = runStageB(candles, request, shortlist, { units: { from: 100, to: 216 } });
    expect(head.progress).toEqual({ processed: 100, total: 100 });
    expect(mergeTops([head.top, tail.top], 12)).toEqual(whole.top);
    expect(() => runStageB(candles, request, shortlist, { units: { from: 5, to: 217 } })).toThrow(
      /unit range out of bounds/,
    );
  });

  it('plans contiguous, non-empty shards covering every unit', () => {
    expect(planShards(10, 4)).toEqual([
      { from: 0, to: 2 },
      { from: 2, to: 5 },
      { from: 5, to: 7 },
      { from: 7, to: 10 },
    ]);
    expect(planShards(2, 8)).toEqual([
      { from: 0, to: 1 },
      { from: 1, to: 2 },
    ]);
  });
});
