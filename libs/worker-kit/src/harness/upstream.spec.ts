import { ArtifactReadError, InMemoryArtifactStore } from '@tda/artifacts';
import { isTdaError, type FlowRun, type FlowStep, type OhlcvExport } from '@tda/contracts';
import { makeRun, sampleInputs } from '@tda/flow-engine/testing';
import { describe, expect, it } from 'vitest';
import { StepInputError } from '../step-errors';
import { CHART_EXPORT_STEP, LLM_REPORT_STEP, stepTypeRegistry } from '@tda/step-types';
import { resolveUpstreamRefs, UpstreamReader } from './upstream';

const RUN_ID = '20250115-100000_BTC-USDT_abcde';
const OHLCV = 'ohlcv_export:1w';
const CHARTS = 'charts:1w:ctpl_default_v1';
const OHLCV_URI = `gs://tda-artifacts/runs/${RUN_ID}/1w/${OHLCV}.json`;

function ohlcvArtifact(overrides: Partial<OhlcvExport> = {}): OhlcvExport {
  const candle = (openTime: string, close: number) => ({
    openTime,
    open: 100,
    high: Math.max(100, close) + 1,
    low: Math.min(100, close) - 1,
    close,
    volume: 10,
  });
  return {
    schemaVersion: 1,
    runId: RUN_ID,
    stepId: OHLCV,
    symbol: 'BTC-USDT',
    timeframe: '1w',
    asOf: '2025-01-20T00:00:00.000Z',
    source: { provider: 'bundled', dataset: 'binance/BTCUSDT_1d' },
    range: { from: '2025-01-06T00:00:00.000Z', to: '2025-01-20T00:00:00.000Z' },
    candles: [candle('2025-01-06T00:00:00.000Z', 101), candle('2025-01-13T00:00:00.000Z', 99)],
    candleCount: 2,
    incompleteBucketPolicy: 'marked',
    ...overrides,
  };
}

function reversedCandles(): OhlcvExport {
  const [a, b] = ohlcvArtifact().candles;
  if (a === undefined || b === undefined) throw new Error('fixture');
  return ohlcvArtifact({ candles: [b, a] });
}

/** A RUNNING charts step over a SUCCEEDED OHLCV step (the document as the harness sees it). */
function chartsRun(ohlcv: Partial<FlowStep> = {}, charts: Partial<FlowStep> = {}): FlowRun {
  return makeRun(
    {
      [OHLCV]: {
        status: 'SUCCEEDED',
        timeframe: '1w',
        outputs: { gcs_uri: OHLCV_URI },
        ...ohlcv,
      },
      [CHARTS]: {
        stepType: 'CHART_EXPORT',
        status: 'RUNNING',
        timeframe: '1w',
        dependsOn: [OHLCV],
        inputs: sampleInputs('CHART_EXPORT', [OHLCV]),
        ...charts,
      },
    },
    { status: 'RUNNING' },
  );
}

function refsError(run: FlowRun): unknown {
  const step = run.steps[CHARTS];
  if (step === undefined) throw new Error('fixture');
  try {
    resolveUpstreamRefs(CHART_EXPORT_STEP, run, CHARTS, step, step.inputs);
  } catch (error) {
    return error;
  }
  throw new Error('expected the references to be refused');
}

async function reader(run: FlowRun, artifact: unknown, store = new InMemoryArtifactStore()) {
  if (artifact !== undefined) {
    const bytes = Buffer.from(typeof artifact === 'string' ? artifact : JSON.stringify(artifact));
    await store.put(OHLCV_URI, bytes, { contentType: 'application/json' });
  }
  const step = run.steps[CHARTS];
  if (step === undefined) throw new Error('fixture');
  const refs = resolveUpstreamRefs(CHART_EXPORT_STEP, run, CHARTS, step, step.inputs);
  return new UpstreamReader(store, stepTypeRegistry(), run, step, refs);
}

describe('resolveUpstreamRefs: what the inputs say about the upstream steps', () => {
  it('accepts a SUCCEEDED dependency of the declared type with an artifact', () => {
    const run = chartsRun();
    const step = run.steps[CHARTS];
    if (step === undefined) throw new Error('fixture');
    const refs = resolveUpstreamRefs(CHART_EXPORT_STEP, run, CHARTS, step, step.inputs);
    expect(refs.get('ohlcv')?.map((r) => [r.stepId, r.uri])).toEqual([[OHLCV, OHLCV_URI]]);
  });

  it.each([
    [
      'not a step of this run',
      chartsRun(
        {},
        { inputs: { ohlcvStepId: 'ohlcv_export:1d', chartTemplateId: 'ctpl_default_v1' } },
      ),
      /'ohlcv_export:1d' is not a step of this run/,
    ],
    [
      'of another step type',
      chartsRun({ stepType: 'NEWS_EXPORT' }),
      /is a NEWS_EXPORT step, not OHLCV_EXPORT/,
    ],
    ['not in dependsOn', chartsRun({}, { dependsOn: [] }), /is not in dependsOn/],
    ['not SUCCEEDED', chartsRun({ status: 'FAILED' }), /is FAILED, not SUCCEEDED/],
    ['without an artifact', chartsRun({ outputs: {} }), /has no valid outputs\.gcs_uri/],
    ['of another timeframe', chartsRun({ timeframe: '1d' }), /has timeframe 1d, this step 1w/],
  ])('refuses an upstream step %s: INVALID_STEP_INPUTS naming the field', (_name, run, message) => {
    const error = refsError(run);
    expect(error).toBeInstanceOf(StepInputError);
    expect(error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      retryable: false,
      details: { field: 'ohlcvStepId' },
    });
    expect((error as Error).message).toMatch(message);
  });

  it('refuses a list that names a step twice, or the step itself', () => {
    const reportId = 'llm_report:1w:p_v1';
    const earlier = 'llm_report:1M:p_v1';
    const reportRun = (previousReportStepIds: string[]): FlowRun => {
      const run = chartsRun({}, { status: 'SUCCEEDED', outputs: { gcs_uri: OHLCV_URI } });
      return makeRun(
        {
          ...run.steps,
          [earlier]: {
            stepType: 'LLM_REPORT',
            status: 'SUCCEEDED',
            timeframe: '1M',
            outputs: { gcs_uri: OHLCV_URI },
          },
          [reportId]: {
            stepType: 'LLM_REPORT',
            status: 'RUNNING',
            timeframe: '1w',
            dependsOn: [OHLCV, CHARTS, earlier],
            inputs: { ...sampleInputs('LLM_REPORT', [OHLCV, CHARTS]), previousReportStepIds },
          },
        },
        { status: 'RUNNING' },
      );
    };
    const refuse = (ids: string[]) => {
      const run = reportRun(ids);
      const step = run.steps[reportId];
      if (step === undefined) throw new Error('fixture');
      return () => resolveUpstreamRefs(LLM_REPORT_STEP, run, reportId, step, step.inputs);
    };
    expect(refuse([earlier])).not.toThrow();
    expect(refuse([earlier, earlier])).toThrow(/'llm_report:1M:p_v1' is named twice/);
    expect(refuse([reportId])).toThrow(/names this step itself/);
  });
});

describe('UpstreamReader: ctx.upstream(name)', () => {
  it('reads, parses and validates the artifact, once per execution', async () => {
    const store = new InMemoryArtifactStore();
    const read = await reader(chartsRun(), ohlcvArtifact(), store);
    const first = await read.read('ohlcv', false);
    const again = await read.read('ohlcv', false);
    expect(again).toBe(first);
    expect(first).toMatchObject({ stepId: OHLCV, uri: OHLCV_URI, producedBy: RUN_ID });
    expect(Array.isArray(first) ? undefined : first?.artifact).toEqual(ohlcvArtifact());
  });

  it.each([
    ['missing', undefined, /does not exist/],
    ['not JSON', 'not json', /is not JSON/],
    [
      'off its contract',
      { ...ohlcvArtifact(), candles: 'none' },
      /violates ohlcv_export\.schema\.json/,
    ],
    [
      'of another run',
      ohlcvArtifact({ runId: '20250115-100000_BTC-USDT_other' }),
      /belongs to run/,
    ],
    ['of another step', ohlcvArtifact({ stepId: 'ohlcv_export:1d' }), /belongs to step/],
    ['of another timeframe', ohlcvArtifact({ timeframe: '1d' }), /has timeframe 1d, this step 1w/],
    ['inconsistent (candles out of order)', reversedCandles(), /not after the previous candle/],
  ])('an artifact %s is INVALID_STEP_INPUTS', async (_name, artifact, message) => {
    const read = await reader(chartsRun(), artifact);
    const error = await read.read('ohlcv', false).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StepInputError);
    expect((error as Error).message).toMatch(message);
  });

  it("accepts a rerun's reused step: the artifact belongs to the run that produced it", async () => {
    const source = '20250101-000000_BTC-USDT_srcrn';
    const run = chartsRun({
      outputs: {
        gcs_uri: OHLCV_URI,
        execution: { reusedFrom: { runId: source, stepId: OHLCV, sourceRunId: source } },
      },
    });
    const read = await reader(run, ohlcvArtifact({ runId: source }));
    await expect(read.read('ohlcv', false)).resolves.toMatchObject({ producedBy: source });
  });

  it('storage trouble stays a retryable error (the harness retries or nacks)', async () => {
    const store = new InMemoryArtifactStore();
    store.read = () => Promise.reject(new ArtifactReadError(OHLCV_URI, 'HTTP 503'));
    const read = await reader(chartsRun(), undefined, store);
    const error = await read.read('ohlcv', false).catch((e: unknown) => e);
    expect(isTdaError(error) && error.retryable).toBe(true);
    expect(error).not.toBeInstanceOf(StepInputError);
  });

  it('a failed read is not cached: the next call (an in-process retry) reads again', async () => {
    const store = new InMemoryArtifactStore();
    const read = await reader(chartsRun(), ohlcvArtifact(), store);
    const real = store.read.bind(store);
    let reads = 0;
    store.read = (uri) => {
      reads += 1;
      return reads === 1 ? Promise.reject(new ArtifactReadError(uri, 'HTTP 503')) : real(uri);
    };
    await expect(read.read('ohlcv', false)).rejects.toBeInstanceOf(ArtifactReadError);
    await expect(read.read('ohlcv', false)).resolves.toMatchObject({ stepId: OHLCV });
    expect(reads).toBe(2);
  });

  it('an optional single upstream the inputs leave out reads as undefined; a required one fails', async () => {
    const store = new InMemoryArtifactStore();
    const run = chartsRun();
    const step = run.steps[CHARTS];
    if (step === undefined) throw new Error('fixture');
    const read = new UpstreamReader(
      store,
      stepTypeRegistry(),
      run,
      step,
      new Map([['account', []]]),
    );
    await expect(read.read('account', false, true)).resolves.toBeUndefined();
    const error = await read.read('account', false).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StepInputError);
    expect((error as Error).message).toBe("the inputs name no 'account' step");
  });
});
