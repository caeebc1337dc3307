import 'reflect-metadata';
import { InMemoryArtifactStore } from '@tda/artifacts';
import { validate, type FlowRun } from '@tda/contracts';
import { advance, applyPatch, createRun } from '@tda/flow-engine';
import { seededRandom } from '@tda/flow-engine/testing';
import { InMemoryFlowRunStore } from '@tda/flow-store';
import { BrokerPublisher, buildTopology, InMemoryBroker } from '@tda/messaging';
import { BundledCandleSource } from '@tda/market-data';
import { createMemoryLogger } from '@tda/observability';
import { expectEventually } from '@tda/test-support';
import { createStepWorker } from '@tda/worker-kit';
import { memoryWorkerEnv } from '@tda/worker-kit/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { OhlcvExportHandler } from './ohlcv-export.handler';
import { bootstrapOhlcvExportWorker } from './worker-ohlcv-export.bootstrap';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const NOW = new Date('2026-11-21T08:00:00Z');

/** A flow-1 run for `symbol`, advanced so that both OHLCV steps are READY. */
function readyRun(symbol: string): FlowRun {
  const run = createRun({
    flowKey: 'scheduled_month_week_report_v1',
    scope: { symbol },
    ownerId: 'user-1',
    trigger: { type: 'SCHEDULER', source: 'test' },
    now: NOW,
    random: seededRandom(3),
  });
  const { patch, newlyReady } = advance(run, NOW);
  expect(newlyReady).toEqual(['ohlcv_export:1M', 'ohlcv_export:1w']);
  return applyPatch(run, patch);
}

async function startWorker() {
  const broker = new InMemoryBroker({ timeScale: 0.01 });
  broker.applyTopology(buildTopology());
  cleanups.push(() => broker.close());
  const store = new InMemoryFlowRunStore();
  const artifacts = new InMemoryArtifactStore();
  const log = createMemoryLogger();
  const { app } = await createStepWorker({
    handler: new OhlcvExportHandler({ candles: new BundledCandleSource() }),
    store,
    broker,
    artifacts,
    logger: log.logger,
    owner: 'ohlcv-test',
    drainTimeoutMs: 2_000,
  });
  await app.listen();
  cleanups.push(() => app.close());
  const publisher = new BrokerPublisher({ publisher: broker });
  const dispatch = (run: FlowRun, stepId: string) =>
    publisher.publishStepReady({
      runId: run.runId,
      stepId,
      stepType: 'OHLCV_EXPORT',
      attempt: 0,
      dispatchedAt: NOW.toISOString(),
    });
  return { store, artifacts, dispatch };
}

describe('createStepWorker with this handler on in-memory adapters', () => {
  it('executes a step-ready message into a SUCCEEDED step with a valid artifact', async () => {
    const { store, artifacts, dispatch } = await startWorker();
    const run = readyRun('BTC/USDT');
    await store.create(run);
    await dispatch(run, 'ohlcv_export:1w');

    const uri = `gs://tda-artifacts/runs/${run.runId}/1w/ohlcv_export:1w.json`;
    await expectEventually(
      async () => {
        const step = (await store.get(run.runId))?.run.steps['ohlcv_export:1w'];
        expect(step?.status).toBe('SUCCEEDED');
      },
      { timeoutMs: 10_000 },
    );
    const step = (await store.get(run.runId))?.run.steps['ohlcv_export:1w'];
    expect(step?.outputs).toMatchObject({
      gcs_uri: uri,
      execution: {
        marketData: { provider: 'bundled', dataset: 'yahoo/BTC-USD_1d', candleCount: 104 },
      },
    });
    const artifact = validate.ohlcvExport(JSON.parse((await artifacts.read(uri)).toString('utf8')));
    expect(artifact.ok).toBe(true);
    // the other step was not dispatched and stays READY
    expect((await store.get(run.runId))?.run.steps['ohlcv_export:1M']?.status).toBe('READY');
  });

  it('fails the step with INVALID_STEP_INPUTS naming the available symbols', async () => {
    const { store, dispatch } = await startWorker();
    const run = readyRun('DOGE-USDT');
    await store.create(run);
    await dispatch(run, 'ohlcv_export:1M');
    await expectEventually(
      async () => {
        const step = (await store.get(run.runId))?.run.steps['ohlcv_export:1M'];
        expect(step?.status).toBe('FAILED');
      },
      { timeoutMs: 10_000 },
    );
    expect((await store.get(run.runId))?.run.steps['ohlcv_export:1M']?.error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      retryable: false,
      message: "unknown symbol 'DOGE-USDT'; available: BTC-USD, BTC-USDT, ETH-USDT",
    });
  });
});

describe('bootstrapOhlcvExportWorker', () => {
  it('boots from an env in memory mode with the configured candle source', async () => {
    const memory = await memoryWorkerEnv({ TDA_OHLCV_INCOMPLETE_BUCKETS: 'dropped' });
    cleanups.push(() => memory.cleanup());
    const log = createMemoryLogger();
    const handle = await bootstrapOhlcvExportWorker({
      env: memory.env,
      logger: log.logger,
    });
    cleanups.push(() => handle.close());
    // worker-kit's bootstrapWorkerService tests /healthz, /metrics and close(); here: the service part.
    expect(handle.handler).toBeInstanceOf(OhlcvExportHandler);
    expect(log.withEvent('service_started')[0]).toMatchObject({
      stepType: 'OHLCV_EXPORT',
      marketData: 'bundled',
      incompleteBucketPolicy: 'dropped',
    });
  });

  it('refuses to boot on a bad environment', async () => {
    await expect(bootstrapOhlcvExportWorker({ env: { TDA_MARKET_DATA: 'yahoo' } })).rejects.toThrow(
      /TDA_MARKET_DATA/,
    );
  });
});
