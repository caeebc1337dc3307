import 'reflect-metadata';
import { InMemoryArtifactStore } from '@tda/artifacts';
import type { Backends } from '@tda/backends';
import { validate, type ChartsManifest } from '@tda/contracts';
import { InMemoryFlowRunStore } from '@tda/flow-store';
import { buildTopology, InMemoryBroker } from '@tda/messaging';
import { createMemoryLogger } from '@tda/observability';
import { ConfigError } from '@tda/config';
import { bootstrapWorker, createStepWorker } from '@tda/worker-kit';
import { deliverStep, memoryWorkerEnv } from '@tda/worker-kit/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createChartExportHandler } from './chart-export.factory';
import { ChartExportHandler } from './chart-export.handler';
import { chartExportWorker } from './chart-export.worker';
import { CHARTS_STEP_ID, ohlcvExport, runWithChartsReady } from './testing';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Seeds a run whose charts step is READY, delivers it to the worker and checks its manifest. */
async function chartsStepSucceeds(worker: {
  backends: Pick<Backends, 'store' | 'broker' | 'artifacts'>;
  config: { TDA_PUBSUB_PREFIX: string };
}): Promise<ChartsManifest> {
  const { store, artifacts } = worker.backends;
  const { run, ohlcvUri } = runWithChartsReady();
  await store.create(run);
  await artifacts.put(ohlcvUri, Buffer.from(JSON.stringify(ohlcvExport(run))), {
    contentType: 'application/json',
  });
  const step = await deliverStep(worker, {
    runId: run.runId,
    stepId: CHARTS_STEP_ID,
    stepType: 'CHART_EXPORT',
  });
  expect(step.status).toBe('SUCCEEDED');
  const manifestUri = `gs://tda-artifacts/runs/${run.runId}/1w/${CHARTS_STEP_ID}.json`;
  expect(step.outputs).toMatchObject({ gcs_uri: manifestUri, outputsManifestGcsUri: manifestUri });
  const manifest = validate.chartsManifest(
    JSON.parse((await artifacts.read(manifestUri)).toString('utf8')),
  );
  if (!manifest.ok) throw new Error('manifest invalid');
  for (const item of manifest.value.items) expect(await artifacts.exists(item.gcs_uri)).toBe(true);
  return manifest.value;
}

describe('createStepWorker with this handler on in-memory adapters', () => {
  it('turns a step-ready message into a SUCCEEDED charts step with manifest and PNG', async () => {
    const broker = new InMemoryBroker({ timeScale: 0.01 });
    broker.applyTopology(buildTopology());
    cleanups.push(() => broker.close());
    const store = new InMemoryFlowRunStore();
    const artifacts = new InMemoryArtifactStore();
    const { app } = await createStepWorker({
      handler: createChartExportHandler(),
      store,
      broker,
      artifacts,
      logger: createMemoryLogger().logger,
      owner: 'chart-test',
      drainTimeoutMs: 2_000,
    });
    await app.listen();
    cleanups.push(() => app.close());

    const manifest = await chartsStepSucceeds({
      backends: { store, broker, artifacts },
      config: { TDA_PUBSUB_PREFIX: 'tda' },
    });
    expect(manifest.items.map((i) => i.chartTemplateId)).toEqual(['ctpl_default_v1']);
  });
});

describe('bootstrapWorker(chartExportWorker)', () => {
  it('boots from an env in memory mode with the configured image limit', async () => {
    const memory = await memoryWorkerEnv({ TDA_MAX_CHART_IMAGE_BYTES: '200000' });
    cleanups.push(() => memory.cleanup());
    const log = createMemoryLogger();
    const handle = await bootstrapWorker(chartExportWorker, {
      env: memory.env,
      logger: log.logger,
    });
    cleanups.push(() => handle.close());
    // worker-kit's bootstrapWorker tests /healthz, /metrics and close(); here: the service part.
    expect(handle.handler).toBeInstanceOf(ChartExportHandler);
    expect(handle.handler.renderer.maxImageBytes).toBe(200_000);
    expect(log.withEvent('service_started')[0]).toMatchObject({
      stepType: 'CHART_EXPORT',
      chartTemplates: ['ctpl_default_v1', 'ctpl_macd_v1', 'ctpl_price_ema_v1', 'ctpl_rsi_v1'],
      maxChartImageBytes: 200_000,
    });
  });

  it('the booted worker turns a step-ready message on its own backends into a SUCCEEDED charts step', async () => {
    const memory = await memoryWorkerEnv();
    cleanups.push(() => memory.cleanup());
    const handle = await bootstrapWorker(chartExportWorker, {
      env: memory.env,
      logger: createMemoryLogger().logger,
    });
    cleanups.push(() => handle.close());
    const manifest = await chartsStepSucceeds(handle);
    expect(manifest.items.length).toBeGreaterThan(0);
  });

  it('refuses to boot on a bad environment, naming the service and the variable', async () => {
    const boot = bootstrapWorker(chartExportWorker, {
      env: { TDA_MAX_CHART_IMAGE_BYTES: 'lots' },
    });
    await expect(boot).rejects.toThrow(/TDA_MAX_CHART_IMAGE_BYTES/);
    await expect(boot).rejects.toBeInstanceOf(ConfigError);
    await expect(boot).rejects.toMatchObject({ service: 'worker-chart-export' });
  });
});
