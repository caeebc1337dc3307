import { isMainThread, parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { IndicatorCache, runStageB } from '@tda/backtest';
import { isTdaError, type ErrorInfo } from '@tda/contracts';
import {
  STAGE_B_THREAD_ROLE,
  type FromThread,
  type StageBJob,
  type StageBThreadData,
  type ToThread,
} from './thread-protocol';

function isStageBThreadData(value: unknown): value is StageBThreadData {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { role?: unknown }).role === STAGE_B_THREAD_ROLE
  );
}

function errorInfo(error: unknown): ErrorInfo {
  if (isTdaError(error)) return error.toErrorInfo();
  const message = error instanceof Error ? error.message : String(error);
  return { code: 'INTERNAL_ERROR', message: message || 'unknown error', retryable: false };
}

/**
 * The thread side: keeps the current job (and one IndicatorCache for it, so a series is computed
 * at most once per thread and job) and runs the shards the pool sends, one at a time,
 * synchronously (runStageB is a plain loop), posting progress and best-so-far after every batch
 * and the shard's top-K at its end. Cancellation is the job's shared flag, read at every batch.
 */
export function serveStageB(port: MessagePort): void {
  const post = (message: FromThread): void => port.postMessage(message);
  let job: StageBJob | undefined;
  let cache: IndicatorCache | undefined;
  port.on('message', (message: ToThread) => {
    try {
      if (message.type === 'job') {
        job = message.job;
        cache = new IndicatorCache(job.candles);
        return;
      }
      if (job === undefined || cache === undefined) throw new Error('shard before any job');
      const { cancelFlag, candles, request, shortlist, batchSize, topKPersistedDefault } = job;
      const { shard, units } = message;
      const result = runStageB(candles, request, shortlist, {
        cache,
        units,
        batchSize,
        isCancelled: () => Atomics.load(cancelFlag, 0) === 1,
        onBatch: (progress, top) => post({ type: 'batch', shard, progress, top }),
        ...(topKPersistedDefault === undefined ? {} : { topKPersistedDefault }),
      });
      post({ type: 'shard-done', shard, result });
    } catch (error) {
      post({ type: 'error', error: errorInfo(error) });
    }
  });
  post({ type: 'ready' });
}

let serving = false;

/**
 * Call first in a process entry (a service's main.ts): in a stage-B thread it starts serving and
 * returns true — the caller must then start nothing else; in the main thread it returns false.
 * This is what lets a single-file bundle be its own thread entry (see README).
 */
export function runBacktestThreadIfWorker(): boolean {
  if (isMainThread || parentPort === null || !isStageBThreadData(workerData)) return false;
  // In a bundle this module's own call below runs first: serve once, answer true to both.
  if (!serving) serveStageB(parentPort);
  serving = true;
  return true;
}

// Loaded as a thread entry from source (see spawn.ts): serve at once.
runBacktestThreadIfWorker();
