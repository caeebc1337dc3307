import { createHash } from 'node:crypto';
import { InMemoryArtifactStore } from '@tda/artifacts';
import {
  ChartRenderer,
  ChartTemplateRegistry,
  DEFAULT_CHART_TEMPLATES,
  defineChartTemplate,
  readPngInfo,
} from '@tda/charts';
import { validate, type ChartsManifest, type FlowRun, type OhlcvCandle } from '@tda/contracts';
import { applyPatch, stepPatch } from '@tda/flow-engine';
import {
  StepInputError,
  stepArtifactUri,
  type StepExecutionContext,
  type StepResult,
} from '@tda/worker-kit';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ChartExportHandler, type ChartExportInputs } from './chart-export.handler';
import { createChartExportHandler } from './chart-export.factory';
import {
  ARTIFACTS,
  CHARTS_STEP_ID,
  FIXTURE_NOW,
  OHLCV_STEP_ID,
  ohlcvExport,
  runWithChartsReady,
  weeklyCandles,
} from './testing';

/** A template that always throws: the "one chart fails" case without touching real templates. */
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

function handlerWithBroken(maxImageBytes?: number): ChartExportHandler {
  return new ChartExportHandler({
    renderer: new ChartRenderer({
      templates: new ChartTemplateRegistry([...DEFAULT_CHART_TEMPLATES, brokenTemplate]),
      ...(maxImageBytes === undefined ? {} : { maxImageBytes }),
    }),
  });
}

const handler = createChartExportHandler();
const SMALL = { width: 640, height: 260 };

interface Setup {
  run: FlowRun;
  ohlcvUri: string;
  store: InMemoryArtifactStore;
}

async function setup(
  options: {
    inputs?: Record<string, unknown>;
    artifact?: Buffer | null;
    run?: (run: FlowRun) => FlowRun;
  } = {},
): Promise<Setup> {
  const ready = runWithChartsReady();
  let run = ready.run;
  if (options.inputs !== undefined) {
    run = applyPatch(run, stepPatch(CHARTS_STEP_ID, { inputs: options.inputs }));
  }
  if (options.run !== undefined) run = options.run(run);
  const store = new InMemoryArtifactStore();
  if (options.artifact !== null) {
    const data = options.artifact ?? Buffer.from(JSON.stringify(ohlcvExport(run)));
    await store.put(ready.ohlcvUri, data, { contentType: 'application/json' });
  }
  return { run, ohlcvUri: ready.ohlcvUri, store };
}

function validateOn(h: ChartExportHandler, run: FlowRun): ChartExportInputs {
  const step = run.steps[CHARTS_STEP_ID];
  if (step === undefined) throw new Error('no charts step');
  return h.validateInputs(run, CHARTS_STEP_ID, step);
}

interface ContextOptions {
  signal?: AbortSignal;
  onHeartbeat?: (progress: unknown) => void;
}

function contextFor(
  s: Setup,
  inputs: ChartExportInputs,
  options: ContextOptions = {},
): StepExecutionContext<ChartExportInputs> {
  const step = s.run.steps[CHARTS_STEP_ID];
  if (step === undefined) throw new Error('no charts step');
  return {
    run: s.run,
    stepId: CHARTS_STEP_ID,
    step,
    inputs,
    attempt: 1,
    signal: options.signal ?? new AbortController().signal,
    deadline: new Date(FIXTURE_NOW.getTime() + 60_000),
    heartbeat: (progress) => options.onHeartbeat?.(progress),
    artifacts: s.store,
    artifactUri: (suffix = '.json') =>
      stepArtifactUri(
        { ...ARTIFACTS, runId: s.run.runId, stepId: CHARTS_STEP_ID, timeframe: '1w' },
        suffix,
      ),
    now: () => FIXTURE_NOW,
  };
}

async function run(h: ChartExportHandler, s: Setup, options?: ContextOptions): Promise<StepResult> {
  return h.execute(contextFor(s, validateOn(h, s.run), options));
}

function manifestOf(result: StepResult): ChartsManifest {
  const primary = result.artifacts.find((a) => a.uri === result.primaryUri);
  if (primary === undefined) throw new Error('primary artifact missing');
  const checked = validate.chartsManifest(JSON.parse(primary.data.toString('utf8')));
  expect(checked.ok ? [] : checked.issues).toEqual([]);
  if (!checked.ok) throw new Error('invalid manifest');
  return checked.value;
}

function inputError(fn: () => unknown): StepInputError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(StepInputError);
    if (error instanceof StepInputError) return error;
  }
  throw new Error('expected a StepInputError');
}

async function inputErrorAsync(promise: Promise<unknown>): Promise<StepInputError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StepInputError);
  if (!(error instanceof StepInputError)) throw new Error('expected a StepInputError');
  return error;
}

describe('ChartExportHandler: flow 1 default request', () => {
  let s: Setup;
  let result: StepResult;
  beforeAll(async () => {
    s = await setup();
    result = await run(handler, s);
  });

  it('validates the catalogue inputs and resolves the upstream artifact', () => {
    const inputs = validateOn(handler, s.run);
    expect(inputs).toMatchObject({
      ohlcvStepId: OHLCV_STEP_ID,
      ohlcvGcsUri: s.ohlcvUri,
      chartTemplateId: 'ctpl_default_v1',
      minImages: 1,
      requests: [{ chartTemplateId: 'ctpl_default_v1', kind: 'candlestick' }],
    });
  });

  it('writes the PNG first and the schema-valid manifest last, as primary', () => {
    const manifestUri = `gs://tda-artifacts/runs/${s.run.runId}/1w/${CHARTS_STEP_ID}.json`;
    const pngUri = `gs://tda-artifacts/runs/${s.run.runId}/1w/${CHARTS_STEP_ID}.ctpl_default_v1.png`;
    expect(result.artifacts.map((a) => [a.uri, a.contentType])).toEqual([
      [pngUri, 'image/png'],
      [manifestUri, 'application/json'],
    ]);
    expect(result.primaryUri).toBe(manifestUri);
    expect(result.outputs).toEqual({ outputsManifestGcsUri: manifestUri });
    expect(result.failure).toBeUndefined();
    expect(result.execution).toMatchObject({ charts: { requested: 1, rendered: 1, failed: 0 } });
  });

  it('records what the PNG really is, with a description from the candles', () => {
    const manifest = manifestOf(result);
    const png = result.artifacts[0]?.data;
    if (png === undefined) throw new Error('no png');
    expect(readPngInfo(png)).toMatchObject({ width: 1280, height: 960 });
    expect(manifest).toMatchObject({
      schemaVersion: 1,
      runId: s.run.runId,
      stepId: CHARTS_STEP_ID,
      symbol: 'BTC-USD',
      timeframe: '1w',
      ohlcvGcsUri: s.ohlcvUri,
      minImages: 1,
      requested: [{ chartTemplateId: 'ctpl_default_v1', kind: 'candlestick' }],
      failures: [],
      status: 'SUCCEEDED',
    });
    expect(manifest.items).toEqual([
      {
        chartTemplateId: 'ctpl_default_v1',
        kind: 'candlestick',
        gcs_uri: result.artifacts[0]?.uri,
        contentType: 'image/png',
        width: 1280,
        height: 960,
        bytes: png.length,
        sha256: createHash('sha256').update(png).digest('hex'),
        description: expect.stringMatching(
          /^BTC-USD 1w candles 2020-03-02\.\.2022-02-21 \(104 bars/,
        ),
      },
    ]);
    // The week of 2022-02-21 closed at 37,710 (Yahoo daily close of 2022-02-27).
    expect(manifest.items[0]?.description).toContain('last close 37,710');
    // contracts/examples/charts_manifest.partial.example.json quotes the same weekly RSI.
    expect(manifest.items[0]?.description).toContain('RSI(14) 40.6');
  });

  it('is deterministic: re-execution writes identical bytes (create-only puts say "existed")', async () => {
    for (const artifact of result.artifacts) {
      await s.store.put(artifact.uri, artifact.data, { contentType: artifact.contentType });
    }
    const again = await run(handler, s);
    for (const artifact of again.artifacts) {
      const put = await s.store.put(artifact.uri, artifact.data, {
        contentType: artifact.contentType,
      });
      expect(put.created).toBe(false);
    }
  });

  it('recovers from the written manifest without rendering', async () => {
    const recovered = await handler.recover({
      ...contextFor(s, validateOn(handler, s.run)),
      existingUri: result.primaryUri,
    });
    expect(recovered).toEqual({
      artifacts: [],
      primaryUri: result.primaryUri,
      outputs: result.outputs,
      execution: result.execution,
    });
  });
});

describe('ChartExportHandler: partial success (seed 000 minImages)', () => {
  const requests = [
    { chartTemplateId: 'ctpl_rsi_v1', kind: 'rsi', params: { ...SMALL, period: 14 } },
    { chartTemplateId: 'ctpl_broken_v1' },
    { chartTemplateId: 'ctpl_macd_v1', kind: 'macd', params: SMALL },
  ];

  it('succeeds with failures[] when minImages is met', async () => {
    const h = handlerWithBroken();
    const s = await setup({ inputs: { ohlcvStepId: OHLCV_STEP_ID, minImages: 2, requests } });
    const beats: unknown[] = [];
    const result = await run(h, s, { onHeartbeat: (p) => beats.push(p) });
    const manifest = manifestOf(result);
    expect(result.failure).toBeUndefined();
    expect(manifest.status).toBe('SUCCEEDED');
    expect(manifest.items.map((i) => [i.chartTemplateId, i.kind, i.width, i.height])).toEqual([
      ['ctpl_rsi_v1', 'rsi', 640, 260],
      ['ctpl_macd_v1', 'macd', 640, 260],
    ]);
    expect(manifest.failures).toEqual([
      {
        chartTemplateId: 'ctpl_broken_v1',
        code: 'INTERNAL_ERROR',
        message: 'ctpl_broken_v1: rendering failed: synthetic failure',
      },
    ]);
    expect(manifest.requested).toEqual([
      {
        chartTemplateId: 'ctpl_rsi_v1',
        kind: 'rsi',
        params: { height: 260, period: 14, width: 640 },
      },
      { chartTemplateId: 'ctpl_broken_v1', kind: 'candlestick' },
      { chartTemplateId: 'ctpl_macd_v1', kind: 'macd', params: { height: 260, width: 640 } },
    ]);
    expect(result.artifacts.map((a) => a.uri.split('/').pop())).toEqual([
      `${CHARTS_STEP_ID}.ctpl_rsi_v1.png`,
      `${CHARTS_STEP_ID}.ctpl_macd_v1.png`,
      `${CHARTS_STEP_ID}.json`,
    ]);
    expect(beats).toEqual([
      { stage: 'render', processedUnits: 0, totalUnits: 3 },
      { stage: 'render', processedUnits: 1, totalUnits: 3 },
      { stage: 'render', processedUnits: 2, totalUnits: 3 },
    ]);
  });

  it('fails with the manifest written when minImages is not met', async () => {
    const h = handlerWithBroken();
    const s = await setup({
      inputs: { ohlcvStepId: OHLCV_STEP_ID, minImages: 2, requests: requests.slice(0, 2) },
    });
    const result = await run(h, s);
    const manifest = manifestOf(result);
    expect(manifest.status).toBe('FAILED');
    expect(manifest.items).toHaveLength(1);
    expect(result.primaryUri).toBe(result.outputs?.['outputsManifestGcsUri']);
    expect(result.failure).toEqual({
      code: 'INTERNAL_ERROR',
      message: 'only 1 of 2 charts rendered (minImages=2)',
      details: {
        outputsManifestGcsUri: result.primaryUri,
        rendered: 1,
        requested: 2,
        minImages: 2,
        failures: [{ chartTemplateId: 'ctpl_broken_v1', code: 'INTERNAL_ERROR' }],
      },
    });
    // Recovery from this manifest finalizes FAILED the same way.
    for (const artifact of result.artifacts) {
      await s.store.put(artifact.uri, artifact.data, { contentType: artifact.contentType });
    }
    const recovered = await h.recover({
      ...contextFor(s, validateOn(h, s.run)),
      existingUri: result.primaryUri,
    });
    expect(recovered?.failure).toEqual(result.failure);
  });

  it('lists an image that stays over the size limit as a failure', async () => {
    const h = handlerWithBroken(1000);
    const s = await setup({
      inputs: {
        ohlcvStepId: OHLCV_STEP_ID,
        minImages: 1,
        requests: [{ chartTemplateId: 'ctpl_rsi_v1', params: { width: 320, height: 240 } }],
      },
    });
    const result = await run(h, s);
    const manifest = manifestOf(result);
    expect(manifest.items).toEqual([]);
    expect(manifest.failures).toEqual([
      {
        chartTemplateId: 'ctpl_rsi_v1',
        code: 'INTERNAL_ERROR',
        message: expect.stringMatching(/over the 1000-byte image limit/),
      },
    ]);
    expect(result.failure?.message).toBe('only 0 of 1 charts rendered (minImages=1)');
    expect(result.artifacts).toHaveLength(1);
  });
});

describe('ChartExportHandler: cancellation', () => {
  it('stops between charts when the signal aborts', async () => {
    const s = await setup({
      inputs: {
        ohlcvStepId: OHLCV_STEP_ID,
        minImages: 1,
        requests: [
          { chartTemplateId: 'ctpl_rsi_v1', params: SMALL },
          { chartTemplateId: 'ctpl_macd_v1', params: SMALL },
        ],
      },
    });
    const controller = new AbortController();
    const reason = { kind: 'cancelled' };
    let beats = 0;
    const outcome = run(handler, s, {
      signal: controller.signal,
      onHeartbeat: () => {
        beats += 1;
        if (beats === 2) controller.abort(reason);
      },
    });
    await expect(outcome).rejects.toBe(reason);
    expect(beats).toBe(2);
  });
});

describe('ChartExportHandler: bad inputs', () => {
  const base = {
    ohlcvStepId: OHLCV_STEP_ID,
    chartTemplateId: 'ctpl_default_v1',
    minImages: 1,
    requests: [{ chartTemplateId: 'ctpl_default_v1', kind: 'candlestick' }],
  };

  async function errorFor(inputs: Record<string, unknown>): Promise<StepInputError> {
    const s = await setup({ inputs });
    return inputError(() => validateOn(handler, s.run));
  }

  it('names the available templates for an unknown one', async () => {
    const error = await errorFor({ ...base, requests: [{ chartTemplateId: 'ctpl_nope_v1' }] });
    expect(error.code).toBe('INVALID_STEP_INPUTS');
    expect(error.retryable).toBe(false);
    expect(error.message).toBe(
      "inputs.requests[0]: unknown chartTemplateId 'ctpl_nope_v1'; available: ctpl_default_v1, ctpl_macd_v1, ctpl_price_ema_v1, ctpl_rsi_v1",
    );
    expect(error.details).toMatchObject({ field: 'requests[0]', available: expect.any(Array) });
    expect((await errorFor({ ...base, chartTemplateId: 'ctpl_gone_v9' })).message).toMatch(
      /^inputs\.chartTemplateId: unknown chartTemplateId 'ctpl_gone_v9'/,
    );
  });

  it.each([
    ['empty requests', { requests: [] }, /requests must be a non-empty array/],
    [
      'requests not an array',
      { requests: 'ctpl_default_v1' },
      /requests must be a non-empty array/,
    ],
    ['minImages 0', { minImages: 0 }, /minImages must be an integer from 1 to 1/],
    [
      'minImages over the request count',
      { minImages: 2 },
      /minImages must be an integer from 1 to 1/,
    ],
    ['fractional minImages', { minImages: 1.5 }, /minImages/],
    ['minImages as a string', { minImages: '1' }, /minImages/],
    ['unknown input field', { minimages: 1 }, /inputs has unknown fields: minimages/],
    [
      'unknown request field',
      { requests: [{ chartTemplateId: 'ctpl_default_v1', size: 3 }] },
      /requests\[0\] has unknown fields: size/,
    ],
    [
      'duplicate template',
      { requests: [{ chartTemplateId: 'ctpl_rsi_v1' }, { chartTemplateId: 'ctpl_rsi_v1' }] },
      /requests\[1\]: chartTemplateId 'ctpl_rsi_v1' is requested twice/,
    ],
    [
      'kind the template does not draw',
      { requests: [{ chartTemplateId: 'ctpl_rsi_v1', kind: 'candlestick' }] },
      /template ctpl_rsi_v1 draws kind 'rsi', not 'candlestick'/,
    ],
    [
      'bad params',
      { requests: [{ chartTemplateId: 'ctpl_rsi_v1', params: { period: 1, colour: 'red' } }] },
      /requests\[0\]: invalid params for ctpl_rsi_v1: .*period/,
    ],
    ['missing ohlcvStepId', { ohlcvStepId: undefined }, /ohlcvStepId must be a non-empty string/],
    [
      'unknown ohlcvStepId',
      { ohlcvStepId: 'ohlcv_export:1d' },
      /'ohlcv_export:1d' is not a step of this run/,
    ],
    [
      'ohlcvStepId of another type',
      { ohlcvStepId: 'charts:1M:ctpl_default_v1' },
      /is a CHART_EXPORT step, not OHLCV_EXPORT/,
    ],
    ['ohlcvStepId not a dependency', { ohlcvStepId: 'ohlcv_export:1M' }, /is not in dependsOn/],
  ])('rejects %s', async (_name, override, message) => {
    const inputs: Record<string, unknown> = { ...base, ...override };
    for (const key of Object.keys(inputs)) if (inputs[key] === undefined) delete inputs[key];
    expect((await errorFor(inputs)).message).toMatch(message);
  });

  it("accepts seed 000's shorthand: chartTemplateId without requests", async () => {
    const s = await setup({
      inputs: { ohlcvStepId: OHLCV_STEP_ID, chartTemplateId: 'ctpl_rsi_v1' },
    });
    expect(validateOn(handler, s.run)).toMatchObject({
      minImages: 1,
      requests: [{ chartTemplateId: 'ctpl_rsi_v1', kind: 'rsi' }],
    });
  });

  it('rejects an upstream step that is not SUCCEEDED or has no gcs_uri', async () => {
    const notDone = await setup({
      run: (r) => applyPatch(r, stepPatch(OHLCV_STEP_ID, { status: 'RUNNING' })),
    });
    expect(inputError(() => validateOn(handler, notDone.run)).message).toMatch(
      /is RUNNING, not SUCCEEDED/,
    );
    const noUri = await setup({
      run: (r) => applyPatch(r, stepPatch(OHLCV_STEP_ID, { outputs: {} })),
    });
    expect(inputError(() => validateOn(handler, noUri.run)).message).toMatch(
      /has no outputs\.gcs_uri/,
    );
  });
});

describe('ChartExportHandler: bad OHLCV artifact', () => {
  function shifted(candles: OhlcvCandle[]): OhlcvCandle[] {
    const [a, b, ...rest] = candles;
    if (a === undefined || b === undefined) throw new Error('fixture too short');
    return [b, a, ...rest];
  }

  it.each([
    ['missing', null, /does not exist/],
    ['not JSON', Buffer.from('{"candles": ['), /is not JSON/],
    [
      'schema-invalid',
      Buffer.from(JSON.stringify({ schemaVersion: 1 })),
      /violates ohlcv_export\.schema\.json/,
    ],
  ])('is an input error when %s', async (_name, artifact, message) => {
    const s = await setup({ artifact });
    expect((await inputErrorAsync(run(handler, s))).message).toMatch(message);
  });

  it('is an input error when it belongs to another run (unless a rerun reused it from there) or is out of order', async () => {
    const ready = runWithChartsReady();
    const other = ohlcvExport({ ...ready.run, runId: '20220228-060000_ETH-USD_zzzzzz' });
    const foreign = await setup({ artifact: Buffer.from(JSON.stringify(other)) });
    expect((await inputErrorAsync(run(handler, foreign))).message).toMatch(/belongs to run/);

    // ...but an export reused by a rerun belongs to the run that produced it.
    const reused = await setup({
      artifact: Buffer.from(JSON.stringify(other)),
      run: (r) =>
        applyPatch(
          r,
          stepPatch(OHLCV_STEP_ID, {
            'outputs.execution.reusedFrom': {
              runId: other.runId,
              stepId: OHLCV_STEP_ID,
              sourceRunId: other.runId,
            },
          }),
        ),
    });
    expect(manifestOf(await run(handler, reused)).runId).toBe(ready.run.runId);

    const unordered = await setup({
      artifact: Buffer.from(JSON.stringify(ohlcvExport(ready.run, shifted(weeklyCandles())))),
    });
    expect((await inputErrorAsync(run(handler, unordered))).message).toMatch(
      /candles\[1\] is not after the previous candle/,
    );
  });
});
