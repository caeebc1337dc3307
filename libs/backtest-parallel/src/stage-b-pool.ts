import type { Worker } from 'node:worker_threads';
import {
  DEFAULT_GRID_LIMITS,
  runStageB,
  stageBUnitCount,
  type BaseScore,
  type CandleArrays,
  type GridRequest,
  type IndicatorCache,
  type StageBResult,
} from '@tda/backtest';
import { planShards } from './merge';
import { StageBJobRun, type StageBRunOptions } from './stage-b-job';
import { defaultSpawn, STAGE_B_THREAD_DATA, type SpawnStageBThread } from './spawn';
import { sharedCandles, type FromThread, type StageBJob } from './thread-protocol';

export interface ParallelStageBOptions extends StageBRunOptions {
  /** Threads (`parallel_workers`); 1 (the default) runs inline, without a thread. */
  workers?: number;
  /** How to start a thread (default: from source when running TypeScript, else the bundle). */
  spawn?: SpawnStageBThread;
  /** Threads kept across jobs (the caller closes it); default: a pool for this call only. */
  pool?: StageBThreadPool;
  /** Inline run only (workers = 1): share the job's indicator cache. */
  cache?: IndicatorCache;
}

/**
 * Stage B over threads: the units are cut into contiguous shards handed out on demand; each
 * thread runs runStageB on its shard with its own running top-K; the pool merges them. The ranking
 * is a total order (total_return_pct desc, variant_key asc), so the merged top-K equals the serial
 * runStageB's for any number of threads. Without `pool`, the threads live for this call only.
 */
export async function runStageBParallel(
  candles: CandleArrays,
  request: GridRequest,
  shortlist: readonly BaseScore[],
  options: ParallelStageBOptions = {},
): Promise<StageBResult> {
  const { workers, spawn, pool, cache, shardsPerThread, ...run } = options;
  if (pool !== undefined) return pool.run(candles, request, shortlist, options);
  const threads = Math.max(1, Math.floor(workers ?? 1));
  if (threads === 1 || stageBUnitCount(request, shortlist.length) === 0) {
    return runStageB(candles, request, shortlist, cache === undefined ? run : { ...run, cache });
  }
  const transient = new StageBThreadPool({ threads, ...(spawn === undefined ? {} : { spawn }) });
  try {
    return await transient.run(candles, request, shortlist, {
      ...run,
      ...(shardsPerThread === undefined ? {} : { shardsPerThread }),
    });
  } finally {
    await transient.close();
  }
}

/**
 * Stage-B threads kept across jobs (thread start costs: in source contexts each thread compiles
 * the engine). One job at a time. An error terminates every thread (their state is unknown); the
 * next job starts fresh ones. `close()` terminates them; always call it.
 */
export class StageBThreadPool {
  readonly threads: number;
  private readonly spawn: SpawnStageBThread;
  private workers: Worker[] = [];
  private ready: Promise<void> | undefined;
  private current: StageBJobRun | undefined;

  constructor(options: { threads: number; spawn?: SpawnStageBThread }) {
    this.threads = Math.max(1, Math.floor(options.threads));
    this.spawn = options.spawn ?? defaultSpawn();
  }

  /** Starts the threads (if not yet) and waits until each serves: thread start off the clock. */
  warm(): Promise<void> {
    if (this.ready !== undefined) return this.ready;
    const starting = Array.from({ length: this.threads }, () => this.start());
    this.workers = starting.map((s) => s.worker);
    this.ready = Promise.all(starting.map((s) => s.ready)).then(() => undefined);
    return this.ready;
  }

  async run(
    candles: CandleArrays,
    request: GridRequest,
    shortlist: readonly BaseScore[],
    options: StageBRunOptions = {},
  ): Promise<StageBResult> {
    if (this.current !== undefined) throw new Error('StageBThreadPool runs one job at a time');
    const total = stageBUnitCount(request, shortlist.length);
    const shards = planShards(total, this.threads * Math.max(1, options.shardsPerThread ?? 4));
    const cap = options.topKPersistedDefault ?? DEFAULT_GRID_LIMITS.topKPersistedDefault;
    const job: StageBJob = {
      candles: sharedCandles(candles),
      request,
      shortlist: [...shortlist],
      batchSize: Math.max(1, options.batchSize ?? 1000),
      topKPersistedDefault: options.topKPersistedDefault,
      cancelFlag: new Int32Array(new SharedArrayBuffer(4)),
    };
    const run = new StageBJobRun(job, shards, total, Math.min(request.top_k, cap), options);
    this.current = run;
    try {
      if (total === 0) return run.emptyResult();
      this.warm().catch(() => undefined); // a start failure reaches the run as a thread error
      const used = this.workers.slice(0, Math.min(this.workers.length, shards.length));
      return await run.start(used, (worker, message) => worker.postMessage(message));
    } catch (error) {
      await this.reset();
      throw error;
    } finally {
      this.current = undefined;
    }
  }

  /** Terminates every thread (idempotent; a later run starts new ones). */
  close(): Promise<void> {
    return this.reset();
  }

  private async reset(): Promise<void> {
    const workers = this.workers;
    this.workers = [];
    this.ready = undefined;
    await Promise.all(workers.map((w) => w.terminate()));
  }

  private start(): { worker: Worker; ready: Promise<void> } {
    const worker = this.spawn(STAGE_B_THREAD_DATA);
    const ready = new Promise<void>((resolve, reject) => {
      worker.on('message', (message: FromThread) => {
        if (message.type === 'ready') resolve();
        else this.current?.onMessage(worker, message);
      });
      const fail = (reason: string) => {
        reject(new Error(reason));
        // During a job the job fails (and run() resets); between jobs, drop the threads now so
        // the next job starts fresh ones instead of waiting on a dead one.
        if (this.current === undefined) void this.reset();
        else this.current.onThreadFailure(reason);
      };
      worker.on('error', (error: Error) => fail(error.message));
      worker.on('exit', (code) => {
        if (this.workers.includes(worker)) fail(`thread exited early with code ${code}`);
      });
    });
    return { worker, ready };
  }
}
