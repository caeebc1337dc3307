import type { Worker } from 'node:worker_threads';
import type { Progress, StageBResult, UnitRange, VariantScore } from '@tda/backtest';
import type { ErrorInfo } from '@tda/contracts';
import { BacktestThreadError } from './backtest-parallel.errors';
import { mergeTops } from './merge';
import type { FromThread, StageBJob, ToThread } from './thread-protocol';

/** Options of one parallel stage B (the inline run takes the same, minus the pool ones). */
export interface StageBRunOptions {
  /** Units between two progress reports / cancel checks of a thread (default 1000). */
  batchSize?: number;
  /** Summed progress of the pool and the merged best-so-far, after every batch of any thread. */
  onBatch?: (progress: Progress, bestSoFar: VariantScore[]) => void;
  /** Polled by the pool at every report; once true, threads stop at their next batch boundary. */
  isCancelled?: () => boolean;
  topKPersistedDefault?: number;
  /** Shards per thread (default 4): smaller shards balance uneven variant costs. */
  shardsPerThread?: number;
}

type Send = (worker: Worker, message: ToThread) => void;

/** One job on a pool: hands out shards, merges the reports, settles once. */
export class StageBJobRun {
  private readonly tops: VariantScore[][];
  private readonly processed: number[];
  private next = 0;
  private running = 0;
  private cancelled = false;
  private settled = false;
  private send: Send = () => undefined;
  private resolve: (result: StageBResult) => void = () => undefined;
  private reject: (error: Error) => void = () => undefined;

  constructor(
    private readonly job: StageBJob,
    private readonly shards: UnitRange[],
    private readonly total: number,
    private readonly capacity: number,
    private readonly options: StageBRunOptions,
  ) {
    this.tops = shards.map(() => []);
    this.processed = shards.map(() => 0);
  }

  emptyResult(): StageBResult {
    return { status: 'completed', top: [], progress: { processed: 0, total: 0 } };
  }

  start(workers: Worker[], send: Send): Promise<StageBResult> {
    return new Promise<StageBResult>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
      this.send = send;
      for (const worker of workers) send(worker, { type: 'job', job: this.job });
      for (const worker of workers) this.assign(worker);
    });
  }

  onMessage(worker: Worker, message: Exclude<FromThread, { type: 'ready' }>): void {
    if (this.settled) return;
    if (message.type === 'error') return this.fail(message.error);
    const shard = message.shard;
    if (message.type === 'batch') {
      this.processed[shard] = message.progress.processed;
      this.tops[shard] = message.top;
      this.pollCancel();
      this.options.onBatch?.(this.progress(), mergeTops(this.tops, this.capacity));
      return;
    }
    this.processed[shard] = message.result.progress.processed;
    this.tops[shard] = message.result.top;
    if (message.result.status === 'cancelled') this.cancelled = true;
    this.running--;
    this.assign(worker);
  }

  onThreadFailure(reason: string): void {
    this.fail({ code: 'INTERNAL_ERROR', message: reason, retryable: false });
  }

  private progress(): Progress {
    return { processed: this.processed.reduce((a, b) => a + b, 0), total: this.total };
  }

  private pollCancel(): void {
    if (this.cancelled || this.options.isCancelled?.() !== true) return;
    this.cancelled = true;
    Atomics.store(this.job.cancelFlag, 0, 1);
  }

  /** Sends the next shard, or finishes when none is left and no thread is busy. */
  private assign(worker: Worker): void {
    this.pollCancel();
    if (!this.cancelled && this.next < this.shards.length) {
      const shard = this.next++;
      this.running++;
      this.send(worker, { type: 'shard', shard, units: this.shards[shard] as UnitRange });
      return;
    }
    if (this.running === 0) this.finish();
  }

  private finish(): void {
    if (this.settled) return;
    this.settled = true;
    const top = mergeTops(this.tops, this.capacity);
    const progress = this.progress();
    this.resolve(
      this.cancelled
        ? { status: 'cancelled', top, progress }
        : { status: 'completed', top, progress },
    );
  }

  private fail(info: ErrorInfo): void {
    if (this.settled) return;
    this.settled = true;
    this.reject(new BacktestThreadError(info));
  }
}
