import { createMemoryLogger } from '@tda/observability';
import { prepareWorker, WorkerDisabledError } from '@tda/worker-kit';
import { rejectionOf } from '@tda/test-support';
import { describe, expect, it } from 'vitest';
import { backtestWorker } from './backtest.worker';

const logger = () => createMemoryLogger().logger;
/** prepareWorker opens nothing: the memory backend's env suffices. */
const memoryWorkerEnv = () => ({ TDA_BACKEND: 'memory', PORT: '0' });

describe('backtestWorker', () => {
  it('builds the handler, one job per instance by default', async () => {
    const prepared = await prepareWorker(backtestWorker, { env: memoryWorkerEnv(), logger });
    expect(prepared.runtime.handler.descriptor.stepType).toBe('BACKTEST');
    expect(prepared.runtime.maxInFlight).toBe(1);
    expect(prepared.runtime.delivery).toBe('on-demand');
    expect(prepared.runtime.startedFields).toMatchObject({ parallelWorkers: 1, batchSize: 1000 });
  });

  it('in the main thread it is not a stage-B thread, so runWorker boots it', () => {
    expect(backtestWorker.isThread?.()).toBe(false);
  });

  it('TDA_BACKTEST_ENABLED=false: nothing is built, the boot ends as disabled (exit 0)', async () => {
    const error = await rejectionOf(
      prepareWorker(backtestWorker, {
        env: { ...memoryWorkerEnv(), TDA_BACKTEST_ENABLED: 'false' },
        logger,
      }),
    );
    expect(error).toBeInstanceOf(WorkerDisabledError);
    expect((error as WorkerDisabledError).reason).toContain('TDA_BACKTEST_ENABLED');
  });

  it('refuses an unusable setting at boot', async () => {
    const error = await rejectionOf(
      prepareWorker(backtestWorker, {
        env: { ...memoryWorkerEnv(), TDA_BACKTEST_PARALLEL_WORKERS: '0' },
        logger,
      }),
    );
    expect(String(error)).toContain('TDA_BACKTEST_PARALLEL_WORKERS');
  });
});
