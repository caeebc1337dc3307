import { InMemoryArtifactStore } from '@tda/artifacts';
import {
  ChartRenderer,
  ChartTemplateRegistry,
  DEFAULT_CHART_TEMPLATES,
  defineChartTemplate,
  readPngInfo,
} from '@tda/charts';
import { validate, type FlowRun, type StepReadyMessage } from '@tda/contracts';
import { applyPatch, stepPatch } from '@tda/flow-engine';
import { InMemoryFlowRunStore } from '@tda/flow-store';
import { createMemoryLogger } from '@tda/observability';
import { StepHarness } from '@tda/worker-kit';
import { RecordingPublisher } from '@tda/worker-kit/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ChartExportHandler } from './chart-export.handler';
import {
  CHARTS_STEP_ID,
  FIXTURE_NOW,
  OHLCV_STEP_ID,
  ohlcvExport,
  runWithChartsReady,
} from './testing';

/**
 * The handler inside the real step harness (in-memory store, artifacts and publisher): what a
 * CHART_EXPORT delivery leaves behind in the run document and in storage.
 */
const brokenTemplate = defineChartTemplate({
  id: 'ctpl_broken_v1',
  kind: 'candlestick',
  summary: 'throws on build',
  defaultSize: { width: 400, height: 300 },
  params: z.strictObject({}),
  build: () => {
    throw new Error('synthetic failure');
  },
});

async function deliver(
  inputs?: Record<string, unknown>,
  /** The upstream OHLCV artifact's bytes (default: a valid export of this run). */
  ohlcvBytes?: (run: FlowRun) => Buffer,
) {
  const clock = (): Date => FIXTURE_NOW;
  const ready = runWithChartsReady();
  const run: FlowRun =
    inputs === undefined ? ready.run : applyPatch(ready.run, stepPatch(CHARTS_STEP_ID, { inputs }));
  const store = new InMemoryFlowRunStore({ clock });
  await store.create(run);
  const artifacts = new InMemoryArtifactStore();
  await artifacts.put(
    ready.ohlcvUri,
    ohlcvBytes?.(run) ?? Buffer.from(JSON.stringify(ohlcvExport(run))),
    { contentType: 'application/json' },
  );
  const harness = new StepHarness({
    handler: new ChartExportHandler({
      renderer: new ChartRenderer({
        templates: new ChartTemplateRegistry([...DEFAULT_CHART_TEMPLATES, brokenTemplate]),
      }),
    }),
    store,
    artifacts,
    publisher: new RecordingPublisher(),
    logger: createMemoryLogger().logger,
    clock,
    owner: 'chart-worker-test',
    policy: { heartbeatMs: 30_000, timeoutMs: 30_000 },
    random: () => 0,
  });
  const message: StepReadyMessage = {
    runId: run.runId,
    stepId: CHARTS_STEP_ID,
    stepType: 'CHART_EXPORT',
    attempt: 0,
    dispatchedAt: FIXTURE_NOW.toISOString(),
  };
  const outcome = await harness.handleStepReady(message, { deliveryAttempt: 1 });
  await harness.shutdown();
  const stored = await store.get(run.runId);
  const step = stored?.run.steps[CHARTS_STEP_ID];
  if (step === undefined) throw new Error('charts step vanished');
  const manifestUri = `gs://tda-artifacts/runs/${run.runId}/1w/${CHARTS_STEP_ID}.json`;
  if (!(await artifacts.exists(manifestUri))) {
    return { outcome, step, artifacts, manifestUri, manifest: null };
  }
  const manifest = validate.chartsManifest(
    JSON.parse((await artifacts.read(manifestUri)).toString('utf8')),
  );
  if (!manifest.ok) throw new Error('manifest invalid');
  return { outcome, step, artifacts, manifestUri, manifest: manifest.value };
}

describe('CHART_EXPORT through the step harness', () => {
  it('finalizes flow 1 charts SUCCEEDED with the manifest as outputs and the PNG beside it', async () => {
    const { outcome, step, artifacts, manifestUri, manifest } = await deliver();
    expect(outcome).toMatchObject({ kind: 'executed', status: 'SUCCEEDED' });
    expect(step.status).toBe('SUCCEEDED');
    expect(step.outputs).toMatchObject({
      gcs_uri: manifestUri,
      outputsManifestGcsUri: manifestUri,
    });
    const item = manifest?.items[0];
    if (item === undefined) throw new Error('no chart item');
    const png = await artifacts.read(item.gcs_uri);
    expect(readPngInfo(png)).toMatchObject({ width: item.width, height: item.height });
    expect(png.length).toBe(item.bytes);
  });

  it('finalizes FAILED under minImages, keeping the diagnostic manifest', async () => {
    const { outcome, step, manifest, manifestUri } = await deliver({
      ohlcvStepId: OHLCV_STEP_ID,
      minImages: 2,
      requests: [
        { chartTemplateId: 'ctpl_rsi_v1', params: { width: 320, height: 240 } },
        { chartTemplateId: 'ctpl_broken_v1' },
      ],
    });
    expect(outcome).toMatchObject({ kind: 'failed', status: 'FAILED' });
    expect(step.status).toBe('FAILED');
    expect(step.error).toMatchObject({
      code: 'INTERNAL_ERROR',
      message: 'only 1 of 2 charts rendered (minImages=2)',
      details: { outputsManifestGcsUri: manifestUri, rendered: 1, requested: 2, minImages: 2 },
    });
    // Seed 000: the manifest is referenced from outputs even though the step failed.
    expect(step.outputs.outputsManifestGcsUri).toBe(manifestUri);
    expect(step.outputs.execution?.artifact?.gcs_uri).toBe(manifestUri);
    expect(manifest).toMatchObject({
      status: 'FAILED',
      items: [{ chartTemplateId: 'ctpl_rsi_v1' }],
    });
  });

  it('finalizes FAILED INVALID_STEP_INPUTS for an unknown template, writing nothing', async () => {
    const { outcome, step, manifest } = await deliver({
      ohlcvStepId: OHLCV_STEP_ID,
      requests: [{ chartTemplateId: 'ctpl_nope_v1' }],
    });
    expect(outcome).toMatchObject({
      kind: 'failed',
      status: 'FAILED',
      errorCode: 'INVALID_STEP_INPUTS',
    });
    expect(step.error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      retryable: false,
      message: expect.stringContaining(
        "unknown chartTemplateId 'ctpl_nope_v1'; available: ctpl_broken_v1",
      ),
    });
    expect(manifest).toBeNull();
  });

  it('finalizes FAILED INVALID_STEP_INPUTS when the upstream export belongs to another run, writing nothing', async () => {
    const { outcome, step, manifest, artifacts } = await deliver(undefined, (run) =>
      Buffer.from(JSON.stringify(ohlcvExport({ ...run, runId: '20220228-060000_BTC-USD_other1' }))),
    );
    expect(outcome).toMatchObject({ kind: 'failed', errorCode: 'INVALID_STEP_INPUTS', tries: 1 });
    expect(step.error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      retryable: false,
      message: `${OHLCV_STEP_ID}'s artifact belongs to run 20220228-060000_BTC-USD_other1`,
      details: { field: 'ohlcvStepId', stepId: OHLCV_STEP_ID },
    });
    expect(manifest).toBeNull();
    expect(artifacts.list().filter((uri) => uri.includes(CHARTS_STEP_ID))).toEqual([]);
  });
});
