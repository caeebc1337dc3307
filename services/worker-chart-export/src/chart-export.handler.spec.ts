import { createHash } from 'node:crypto';
import { InMemoryArtifactStore } from '@tda/artifacts';
import {
  ChartRenderer,
  ChartTemplateRegistry,
  DEFAULT_CHART_TEMPLATES,
  defineChartTemplate,
  readPngInfo,
} from '@tda/charts';
import {
  validate,
  type ChartsManifest,
  type ErrorInfo,
  type FlowRun,
  type OhlcvCandle,
} from '@tda/contracts';
import { applyPatch, stepPatch } from '@tda/flow-engine';
import { CHART_EXPORT_STEP } from '@tda/step-types';
import {
  StepInputError,
  type ExistingArtifact,
  type StepContext,
  type StepResult,
} from '@tda/worker-kit';
import { handlerContext } from '@tda/worker-kit/testing';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { ChartExportHandler } from './chart-export.handler';
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

interface ContextOptions {
  signal?: AbortSignal;
  onHeartbeat?: (progress: unknown) => void;
}

type Context = StepContext<typeof CHART_EXPORT_STEP>;

/**
 * What the harness hands the handler for the weekly charts step (inputs checked against
 * chart_export_inputs, the ohlcv reference checked, the upstream reader over `s.store`), or the
 * error it would FAIL the step with instead.
 */
function built(s: Setup, options: ContextOptions = {}) {
  return handlerContext(CHART_EXPORT_STEP, {
    run: s.run,
    stepId: CHARTS_STEP_ID,
    artifacts: s.store,
    bucket: ARTIFACTS.bucket,
    prefix: ARTIFACTS.prefix,
    deadline: new Date(FIXTURE_NOW.getTime() + 60_000),
    now: () => FIXTURE_NOW,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    heartbeat: (progress) => options.onHeartbeat?.(progress),
  });
}

function contextFor(s: Setup, options: ContextOptions = {}): Context {
  const b = built(s, options);
  if (!b.ok) throw new Error(`inputs refused: ${b.error.message}`);
  return b.context;
}

/** The harness's refusal of the inputs (the handler never runs). */
function refusal(s: Setup): ErrorInfo {
  const b = built(s);
  if (b.ok) throw new Error('expected the inputs to be refused');
  return b.error;
}

async function run(h: ChartExportHandler, s: Setup, options?: ContextOptions): Promise<StepResult> {
  return h.execute(contextFor(s, options));
}

/** The primary artifact of a result as the harness hands it to recover() (validated). */
function existingOf(result: StepResult): ExistingArtifact<ChartsManifest> {
  const primary = result.artifacts.find((a) => a.uri === result.primaryUri);
  if (primary === undefined) throw new Error('primary artifact missing');
  return { uri: primary.uri, artifact: manifestOf(result), bytes: primary.data };
}

async function store(s: Setup, result: StepResult): Promise<void> {
  for (const artifact of result.artifacts) {
    await s.store.put(artifact.uri, artifact.data, { contentType: artifact.contentType });
  }
}

function manifestOf(result: StepResult): ChartsManifest {
  const primary = result.artifacts.find((a) => a.uri === result.primaryUri);
  if (primary === undefined) throw new Error('primary artifact missing');
  const checked = validate.chartsManifest(JSON.parse(primary.data.toString('utf8')));
  expect(checked.ok ? [] : checked.issues).toEqual([]);
  if (!checked.ok) throw new Error('invalid manifest');
  return checked.value;
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

  it('takes the catalogue inputs as they are and resolves the upstream export', async () => {
    const context = contextFor(s);
    expect(context.inputs).toEqual({
      ohlcvStepId: OHLCV_STEP_ID,
      chartTemplateId: 'ctpl_default_v1',
      minImages: 1,
      requests: [{ chartTemplateId: 'ctpl_default_v1', kind: 'candlestick' }],
    });
    const ohlcv = await context.upstream('ohlcv');
    expect(ohlcv).toMatchObject({
      stepId: OHLCV_STEP_ID,
      uri: s.ohlcvUri,
      producedBy: s.run.runId,
      artifact: { runId: s.run.runId, stepId: OHLCV_STEP_ID, timeframe: '1w', candleCount: 104 },
    });
    expect(ohlcv.bytes.equals(await s.store.read(s.ohlcvUri))).toBe(true);
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
    // Readings of the frozen fixture (Yahoo history, see btc-usd-1w.candles.json): its week of
    // 2022-02-21 closed at 37,710 (the Yahoo daily close of 2022-02-27), RSI(14) over 104 weeks.
    expect(manifest.items[0]?.description).toContain('last close 37,710');
    expect(manifest.items[0]?.description).toContain('RSI(14) 40.6');
  });

  it('is deterministic: re-execution writes identical bytes (create-only puts say "existed")', async () => {
    await store(s, result);
    const again = await run(handler, s);
    for (const artifact of again.artifacts) {
      const put = await s.store.put(artifact.uri, artifact.data, {
        contentType: artifact.contentType,
      });
      expect(put.created).toBe(false);
    }
  });

  it('recovers from the written manifest without rendering', async () => {
    await store(s, result);
    const h = createChartExportHandler();
    const render = vi.spyOn(h.renderer, 'render');
    const recovered = await h.recover(existingOf(result), contextFor(s));
    expect(recovered).toEqual({
      artifacts: [],
      primaryUri: result.primaryUri,
      outputs: result.outputs,
      execution: result.execution,
    });
    expect(render).not.toHaveBeenCalled();
  });

  it('refuses (null: execute again) a manifest whose image is missing or made for another minImages', async () => {
    const fresh = await setup();
    const first = await run(handler, fresh);
    // only the manifest exists, not the PNG it lists
    const manifest = first.artifacts.at(-1);
    if (manifest === undefined) throw new Error('no manifest');
    await fresh.store.put(manifest.uri, manifest.data, { contentType: manifest.contentType });
    expect(await handler.recover(existingOf(first), contextFor(fresh))).toBeNull();

    await store(fresh, first);
    expect(await handler.recover(existingOf(first), contextFor(fresh))).not.toBeNull();
    const other = existingOf(first);
    other.artifact = { ...other.artifact, minImages: 2 };
    expect(await handler.recover(other, contextFor(fresh))).toBeNull();
  });
});

describe('ChartExportHandler: a history too short for some studies', () => {
  it('says in the manifest which studies the chart could not draw, and why', async () => {
    const candles = weeklyCandles().slice(-9);
    const export9 = ohlcvExport(runWithChartsReady().run, candles);
    const s = await setup({ artifact: Buffer.from(JSON.stringify(export9)) });
    const manifest = manifestOf(await run(handler, s));
    expect(manifest.status).toBe('SUCCEEDED');
    const description = manifest.items[0]?.description ?? '';
    for (const note of [
      'EMA(20) needs 20 bars, 9 available',
      'EMA(50) needs 50 bars, 9 available',
      'Bollinger(20,2) needs 20 bars, 9 available',
      'RSI(14) needs 15 bars, 9 available',
      'MACD(12,26,9) needs 34 bars, 9 available',
    ]) {
      expect(description).toContain(note);
    }
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
    await store(s, result);
    const recovered = await h.recover(existingOf(result), contextFor(s));
    expect(recovered).toEqual({
      artifacts: [],
      primaryUri: result.primaryUri,
      outputs: result.outputs,
      execution: result.execution,
      failure: result.failure,
    });
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

  function inputsOf(override: Record<string, unknown>): Record<string, unknown> {
    const inputs: Record<string, unknown> = { ...base, ...override };
    for (const key of Object.keys(inputs)) if (inputs[key] === undefined) delete inputs[key];
    return inputs;
  }

  /** A domain check of the handler: the harness accepts the inputs, execute() refuses them. */
  async function errorFor(inputs: Record<string, unknown>): Promise<StepInputError> {
    const s = await setup({ inputs });
    const render = vi.spyOn(handler.renderer, 'render');
    try {
      const error = await inputErrorAsync(run(handler, s));
      expect(render).not.toHaveBeenCalled(); // refused before drawing anything
      return error;
    } finally {
      render.mockRestore();
    }
  }

  it('names the available templates for an unknown one', async () => {
    const error = await errorFor({ ...base, requests: [{ chartTemplateId: 'ctpl_nope_v1' }] });
    expect(error.code).toBe('INVALID_STEP_INPUTS');
    expect(error.retryable).toBe(false);
    expect(error.message).toBe(
      "inputs.requests[0]: unknown chartTemplateId 'ctpl_nope_v1'; available: ctpl_default_v1, ctpl_macd_v1, ctpl_price_ema_v1, ctpl_rsi_v1",
    );
    expect(error.details).toMatchObject({ field: 'requests[0]', available: expect.any(Array) });
    const stepLevel = await errorFor({ ...base, chartTemplateId: 'ctpl_gone_v9' });
    expect(stepLevel.message).toMatch(
      /^inputs\.chartTemplateId: unknown chartTemplateId 'ctpl_gone_v9'/,
    );
    expect(stepLevel.details).toMatchObject({ field: 'chartTemplateId' });
  });

  // What chart_export_inputs.schema.json says: the harness FAILS the step before the handler runs,
  // naming the schema path.
  it.each([
    ['empty requests', { requests: [] }, '/requests', 'minItems'],
    ['requests not an array', { requests: 'ctpl_default_v1' }, '/requests', 'type'],
    [
      'more than 12 requests',
      {
        requests: Array.from({ length: 13 }, (_, i) => ({ chartTemplateId: `ctpl_t${i}_v1` })),
        minImages: 1,
      },
      '/requests',
      'maxItems',
    ],
    ['minImages 0', { minImages: 0 }, '/minImages', 'minimum'],
    ['fractional minImages', { minImages: 1.5 }, '/minImages', 'type'],
    ['minImages as a string', { minImages: '1' }, '/minImages', 'type'],
    ['unknown input field', { minimages: 1 }, '/', 'additionalProperties'],
    [
      'unknown request field',
      { requests: [{ chartTemplateId: 'ctpl_default_v1', size: 3 }] },
      '/requests/0',
      'additionalProperties',
    ],
    [
      'params not an object',
      { requests: [{ chartTemplateId: 'ctpl_rsi_v1', params: 'big' }] },
      '/requests/0/params',
      'type',
    ],
    ['missing ohlcvStepId', { ohlcvStepId: undefined }, '/', 'required'],
    [
      'neither requests nor chartTemplateId',
      { requests: undefined, chartTemplateId: undefined },
      '/',
      'required',
    ],
  ])('refuses %s before the handler runs (schema)', async (_name, override, path, keyword) => {
    const error = refusal(await setup({ inputs: inputsOf(override) }));
    expect(error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      retryable: false,
      details: { contract: 'chart_export_inputs' },
    });
    expect(error.message).toMatch(
      new RegExp(
        `^inputs of ${CHARTS_STEP_ID} violate chart_export_inputs\\.schema\\.json: ${path} `,
      ),
    );
    const issues = error.details?.['issues'] as { path: string; keyword: string }[];
    expect(issues).toContainEqual(expect.objectContaining({ path, keyword }));
  });

  // What the schema cannot say: the handler's own checks.
  it.each([
    [
      'minImages over the request count',
      { minImages: 2 },
      /^inputs\.minImages must be an integer from 1 to 1 \(the number of requests\)$/,
    ],
    [
      'duplicate template',
      { requests: [{ chartTemplateId: 'ctpl_rsi_v1' }, { chartTemplateId: 'ctpl_rsi_v1' }] },
      /^inputs\.requests\[1\]: chartTemplateId 'ctpl_rsi_v1' is requested twice$/,
    ],
    [
      'kind the template does not draw',
      { requests: [{ chartTemplateId: 'ctpl_rsi_v1', kind: 'candlestick' }] },
      /^inputs\.requests\[0\]: template ctpl_rsi_v1 draws kind 'rsi', not 'candlestick'$/,
    ],
    [
      'bad params',
      { requests: [{ chartTemplateId: 'ctpl_rsi_v1', params: { period: 1, colour: 'red' } }] },
      /^inputs\.requests\[0\]: invalid params for ctpl_rsi_v1: .*period/,
    ],
  ])('rejects %s from execute (StepInputError)', async (_name, override, message) => {
    const error = await errorFor(inputsOf(override));
    expect(error).toMatchObject({ code: 'INVALID_STEP_INPUTS', retryable: false });
    expect(error.message).toMatch(message);
  });

  // The declared upstream reference (ohlcv: OHLCV_EXPORT, same timeframe), checked by the harness.
  it.each([
    [
      'unknown ohlcvStepId',
      { ohlcvStepId: 'ohlcv_export:1d' },
      "inputs.ohlcvStepId 'ohlcv_export:1d' is not a step of this run",
    ],
    [
      'ohlcvStepId of another type',
      { ohlcvStepId: 'charts:1M:ctpl_default_v1' },
      "inputs.ohlcvStepId 'charts:1M:ctpl_default_v1' is a CHART_EXPORT step, not OHLCV_EXPORT",
    ],
    [
      'ohlcvStepId not a dependency',
      { ohlcvStepId: 'ohlcv_export:1M' },
      "inputs.ohlcvStepId 'ohlcv_export:1M' is not in dependsOn",
    ],
  ])(
    'refuses %s before the handler runs (upstream reference)',
    async (_name, override, message) => {
      const error = refusal(await setup({ inputs: inputsOf(override) }));
      expect(error).toMatchObject({
        code: 'INVALID_STEP_INPUTS',
        retryable: false,
        message,
        details: { field: 'ohlcvStepId' },
      });
    },
  );

  it('refuses an OHLCV step of another timeframe even when it is a SUCCEEDED dependency', async () => {
    const s = await setup({
      inputs: inputsOf({ ohlcvStepId: 'ohlcv_export:1M' }),
      run: (r) =>
        applyPatch(r, {
          ...stepPatch('ohlcv_export:1M', {
            status: 'SUCCEEDED',
            outputs: { gcs_uri: `gs://tda-artifacts/runs/${r.runId}/1M/ohlcv_export:1M.json` },
          }),
          ...stepPatch(CHARTS_STEP_ID, { dependsOn: [OHLCV_STEP_ID, 'ohlcv_export:1M'] }),
        }),
    });
    expect(refusal(s)).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      retryable: false,
      message: "inputs.ohlcvStepId 'ohlcv_export:1M' has timeframe 1M, this step 1w",
    });
  });

  it("accepts seed 000's shorthand: chartTemplateId without requests", async () => {
    const s = await setup({
      inputs: { ohlcvStepId: OHLCV_STEP_ID, chartTemplateId: 'ctpl_rsi_v1' },
    });
    const result = await run(handler, s);
    expect(result.failure).toBeUndefined();
    expect(manifestOf(result)).toMatchObject({
      minImages: 1,
      requested: [{ chartTemplateId: 'ctpl_rsi_v1', kind: 'rsi' }],
      items: [{ chartTemplateId: 'ctpl_rsi_v1', kind: 'rsi' }],
      status: 'SUCCEEDED',
    });
  });

  it('refuses an upstream step that is not SUCCEEDED or has no gcs_uri', async () => {
    const notDone = await setup({
      run: (r) => applyPatch(r, stepPatch(OHLCV_STEP_ID, { status: 'RUNNING' })),
    });
    expect(refusal(notDone)).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      message: `upstream step '${OHLCV_STEP_ID}' is RUNNING, not SUCCEEDED`,
    });
    const noUri = await setup({
      run: (r) => applyPatch(r, stepPatch(OHLCV_STEP_ID, { outputs: {} })),
    });
    expect(refusal(noUri)).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      message: `upstream step '${OHLCV_STEP_ID}' has no valid outputs.gcs_uri`,
    });
    const badUri = await setup({
      run: (r) => applyPatch(r, stepPatch(OHLCV_STEP_ID, { outputs: { gcs_uri: 'https://x/y' } })),
    });
    expect(refusal(badUri).message).toBe(
      `upstream step '${OHLCV_STEP_ID}' has no valid outputs.gcs_uri`,
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
