import 'reflect-metadata';
import { InMemoryArtifactStore } from '@tda/artifacts';
import { ConfigError } from '@tda/config';
import { validate, type FlowRun } from '@tda/contracts';
import { advance, applyPatch, createRun } from '@tda/flow-engine';
import { makeRun, seededRandom } from '@tda/flow-engine/testing';
import { InMemoryFlowRunStore } from '@tda/flow-store';
import { buildTopology, InMemoryBroker } from '@tda/messaging';
import { BundledCandleSource } from '@tda/market-data';
import { createMemoryLogger } from '@tda/observability';
import { bootstrapWorker, createStepWorker, StepHarnessRegistry } from '@tda/worker-kit';
import { deliverStep, memoryWorkerEnv } from '@tda/worker-kit/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { OhlcvExportHandler } from './ohlcv-export.handler';
import { ohlcvExportWorker } from './ohlcv-export.worker';
import { HOUR, recordedExchange, T } from './testing/recorded-exchange';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const NOW = new Date('2026-11-21T08:00:00Z');

/** A flow-1 run for `symbol` (and scope.asOf), advanced so that both OHLCV steps are READY. */
function readyRun(symbol: string, asOf?: string): FlowRun {
  const run = createRun({
    flowKey: 'scheduled_month_week_report_v1',
    scope: asOf === undefined ? { symbol } : { symbol, asOf },
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
  const worker = { backends: { store, broker }, config: { TDA_PUBSUB_PREFIX: 'tda' } };
  const deliver = (run: FlowRun, stepId: string) =>
    deliverStep(worker, { runId: run.runId, stepId, stepType: 'OHLCV_EXPORT' });
  return { store, artifacts, deliver };
}

describe('createStepWorker with this handler on in-memory adapters', () => {
  it('executes a step-ready message into a SUCCEEDED step with a valid artifact', async () => {
    const { store, artifacts, deliver } = await startWorker();
    const run = readyRun('BTC/USDT');
    await store.create(run);

    const uri = `gs://tda-artifacts/runs/${run.runId}/1w/ohlcv_export:1w.json`;
    const step = await deliver(run, 'ohlcv_export:1w');
    expect(step.status).toBe('SUCCEEDED');
    expect(step.outputs).toMatchObject({
      gcs_uri: uri,
      execution: {
        marketData: { provider: 'bundled', dataset: 'binance/BTCUSDT_1d', candleCount: 104 },
      },
    });
    const artifact = validate.ohlcvExport(JSON.parse((await artifacts.read(uri)).toString('utf8')));
    expect(artifact.ok).toBe(true);
    // the other step was not dispatched and stays READY
    expect((await store.get(run.runId))?.run.steps['ohlcv_export:1M']?.status).toBe('READY');
  });

  it('cuts the export at the run’s scope.asOf', async () => {
    const { store, artifacts, deliver } = await startWorker();
    const run = readyRun('ETH-USDT', '2026-06-15T13:00:00+02:00');
    await store.create(run);
    const step = await deliver(run, 'ohlcv_export:1M');
    expect(step.status).toBe('SUCCEEDED');
    const uri = `gs://tda-artifacts/runs/${run.runId}/1M/ohlcv_export:1M.json`;
    const artifact = validate.ohlcvExport(JSON.parse((await artifacts.read(uri)).toString('utf8')));
    if (!artifact.ok) throw new Error('invalid export');
    // the run stores asOf in UTC; June 2026 is the forming month (14 whole days by 11:00 UTC)
    expect(artifact.value.asOf).toBe('2026-06-15T11:00:00Z');
    expect(artifact.value.candles.at(-1)).toMatchObject({
      openTime: '2026-06-01T00:00:00Z',
      complete: false,
    });
  });

  it('fails the step with the source’s INVALID_STEP_INPUTS naming the available symbols', async () => {
    const { store, artifacts, deliver } = await startWorker();
    const run = readyRun('DOGE-USDT');
    await store.create(run);
    const step = await deliver(run, 'ohlcv_export:1M');
    expect(step.status).toBe('FAILED');
    expect(step.error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      retryable: false,
      message: "unknown symbol 'DOGE-USDT'; available: BTC-USDT, ETH-USDT",
      details: { availableSymbols: ['BTC-USDT', 'ETH-USDT'] },
    });
    expect(artifacts.list()).toEqual([]);
  });
});

describe('bootstrapWorker(ohlcvExportWorker)', () => {
  it('boots from an env in memory mode with the configured candle source', async () => {
    const memory = await memoryWorkerEnv({ TDA_OHLCV_INCOMPLETE_BUCKETS: 'dropped' });
    cleanups.push(() => memory.cleanup());
    const log = createMemoryLogger();
    const handle = await bootstrapWorker(ohlcvExportWorker, {
      env: memory.env,
      logger: log.logger,
    });
    cleanups.push(() => handle.close());
    // worker-kit's bootstrapWorker tests /healthz, /metrics and close(); here: the service part.
    expect(handle.handler).toBeInstanceOf(OhlcvExportHandler);
    expect(handle.config).toMatchObject({
      TDA_MARKET_DATA: 'bundled',
      TDA_OHLCV_INCOMPLETE_BUCKETS: 'dropped',
    });
    expect(log.withEvent('service_started')[0]).toMatchObject({
      stepType: 'OHLCV_EXPORT',
      marketData: 'bundled',
      incompleteBucketPolicy: 'dropped',
    });
    expect(
      handle.worker.app.get(StepHarnessRegistry, { strict: false }).harnessFor('OHLCV_EXPORT'),
    ).toBeDefined();
  });

  it('TDA_MARKET_DATA=ccxt with the overrides: a step runs on the given exchange and clock', async () => {
    const memory = await memoryWorkerEnv({ TDA_MARKET_DATA: 'ccxt' });
    cleanups.push(() => memory.cleanup());
    const log = createMemoryLogger();
    const handle = await bootstrapWorker(ohlcvExportWorker, {
      env: memory.env,
      logger: log.logger,
      // 10:30: the 10:00 candle is still forming ('marked' by default)
      overrides: { exchange: recordedExchange, now: () => T + 2 * HOUR + 30 * 60_000 },
    });
    cleanups.push(() => handle.close());
    expect(log.withEvent('service_started')[0]).toMatchObject({
      stepType: 'OHLCV_EXPORT',
      marketData: 'ccxt:binance',
      incompleteBucketPolicy: 'marked',
    });

    const run = makeRun(
      { 'ohlcv_export:1h': { timeframe: '1h', status: 'READY', inputs: { lookback: 5 } } },
      { status: 'RUNNING', runId: '20260920-103000_BTC-USDT_ccxt01' },
    );
    const { store, artifacts } = handle.backends;
    await store.create(run);
    const step = await deliverStep(handle, {
      runId: run.runId,
      stepId: 'ohlcv_export:1h',
      stepType: 'OHLCV_EXPORT',
    });
    expect(step.error).toBeUndefined();
    expect(step.status).toBe('SUCCEEDED');
    const uri = `gs://tda-artifacts/runs/${run.runId}/1h/ohlcv_export:1h.json`;
    expect(step.outputs.gcs_uri).toBe(uri);
    const artifact = validate.ohlcvExport(JSON.parse((await artifacts.read(uri)).toString('utf8')));
    if (!artifact.ok) throw new Error('invalid export');
    expect(artifact.value).toMatchObject({
      source: { provider: 'ccxt', exchange: 'binance', marketSymbol: 'BTC/USDT' },
      incompleteBucketPolicy: 'marked',
      candleCount: 3,
      range: { from: '2026-09-20T08:00:00Z', to: '2026-09-20T11:00:00Z' },
    });
    expect(artifact.value.candles.at(-1)).toMatchObject({
      openTime: '2026-09-20T10:00:00Z',
      complete: false,
    });
  });

  it('refuses to boot on a bad environment, naming the service and the variable', async () => {
    const boot = bootstrapWorker(ohlcvExportWorker, { env: { TDA_MARKET_DATA: 'yahoo' } });
    await expect(boot).rejects.toThrow(/TDA_MARKET_DATA/);
    await expect(boot).rejects.toBeInstanceOf(ConfigError);
    await expect(boot).rejects.toMatchObject({ service: 'worker-ohlcv-export' });
  });
});
