import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InMemoryArtifactStore } from '@tda/artifacts';
import { validate, type FlowRun, type OhlcvExport, type Timeframe } from '@tda/contracts';
import { createRun, DEFAULT_LOOKBACK } from '@tda/flow-engine';
import { makeRun, seededRandom } from '@tda/flow-engine/testing';
import {
  BundledCandleSource,
  CcxtCandleSource,
  MarketDataUnavailableError,
  type CandleSeries,
  type CandleSource,
  type CcxtExchangeLike,
  type FetchCandlesRequest,
} from '@tda/market-data';
import {
  StepError,
  StepInputError,
  stepArtifactUri,
  type StepExecutionContext,
  type StepHeartbeat,
} from '@tda/worker-kit';
import { RateLimitExceeded } from 'ccxt';
import { describe, expect, it } from 'vitest';
import { MAX_LOOKBACK, OhlcvExportHandler, type OhlcvInputs } from './ohlcv-export.handler';

const bundled = new BundledCandleSource();
const EXAMPLES = join(__dirname, '../../../contracts/examples');

function flowRun(symbol: string, now = new Date('2026-11-21T08:00:00Z')): FlowRun {
  return createRun({
    flowKey: 'scheduled_month_week_report_v1',
    scope: { symbol },
    ownerId: 'user-1',
    trigger: { type: 'SCHEDULER', source: 'test' },
    now,
    random: seededRandom(1),
  });
}

/** A run with one OHLCV step of the given timeframe and inputs. */
function oneStepRun(
  timeframe: Timeframe | undefined,
  inputs: unknown,
  symbol = 'BTC-USDT',
): FlowRun {
  const stepId = `ohlcv_export:${timeframe ?? 'x'}`;
  const run = makeRun(
    { [stepId]: timeframe === undefined ? {} : { timeframe } },
    { scope: { symbol } },
  );
  const step = run.steps[stepId];
  if (step !== undefined) step.inputs = inputs as Record<string, unknown>;
  return run;
}

function stepOf(run: FlowRun, stepId: string) {
  const step = run.steps[stepId];
  if (step === undefined) throw new Error(`no step ${stepId}`);
  return step;
}

interface Harnessed {
  context: StepExecutionContext<OhlcvInputs>;
  heartbeats: Array<Parameters<StepHeartbeat>[0]>;
  controller: AbortController;
  store: InMemoryArtifactStore;
}

/** What the worker-kit harness hands a handler, built from the run like the harness does. */
function contextFor(
  handler: OhlcvExportHandler,
  run: FlowRun,
  stepId: string,
  now = new Date('2026-11-21T08:00:05Z'),
): Harnessed {
  const step = stepOf(run, stepId);
  const heartbeats: Harnessed['heartbeats'] = [];
  const controller = new AbortController();
  const store = new InMemoryArtifactStore();
  const heartbeat: StepHeartbeat = (progress) => {
    heartbeats.push(progress);
  };
  const context: StepExecutionContext<OhlcvInputs> = {
    run,
    stepId,
    step,
    inputs: handler.validateInputs(run, stepId, step),
    attempt: 1,
    signal: controller.signal,
    deadline: new Date(now.getTime() + 60_000),
    heartbeat,
    artifacts: store,
    artifactUri: (suffix = '.json') =>
      stepArtifactUri(
        {
          bucket: 'tda-artifacts',
          prefix: 'runs',
          runId: run.runId,
          stepId,
          ...(step.timeframe === undefined ? {} : { timeframe: step.timeframe }),
        },
        suffix,
      ),
    now: () => now,
  };
  return { context, heartbeats, controller, store };
}

async function exportOf(handler: OhlcvExportHandler, run: FlowRun, stepId: string) {
  const { context, heartbeats } = contextFor(handler, run, stepId);
  const result = await handler.execute(context);
  const [artifact] = result.artifacts;
  if (artifact === undefined) throw new Error('no artifact');
  const parsed = JSON.parse(artifact.data.toString('utf8')) as OhlcvExport;
  return { result, artifact, parsed, heartbeats };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

/** A CandleSource returning a fixed series (for the defensive paths). */
class FixedSource implements CandleSource {
  readonly provider = 'bundled' as const;
  readonly requests: FetchCandlesRequest[] = [];
  constructor(private readonly series: CandleSeries) {}
  async listSymbols(): Promise<string[]> {
    return ['BTC-USDT'];
  }
  async availableTimeframes(): Promise<Timeframe[]> {
    return ['1h'];
  }
  async fetchCandles(request: FetchCandlesRequest): Promise<CandleSeries> {
    this.requests.push(request);
    return this.series;
  }
}

const fixedSeries = (candles: CandleSeries['candles']): CandleSeries => ({
  symbol: 'BTC-USDT',
  timeframe: '1h',
  candles,
  source: { provider: 'bundled', dataset: 'binance/BTCUSDT_1h' },
  incompleteBucketPolicy: 'marked',
});

describe('OhlcvExportHandler.validateInputs', () => {
  const handler = new OhlcvExportHandler({ candles: bundled });

  it('reads the inputs the flow catalogue writes', () => {
    const run = flowRun('BTC/USDT');
    expect(handler.validateInputs(run, 'ohlcv_export:1M', stepOf(run, 'ohlcv_export:1M'))).toEqual({
      symbol: 'BTC/USDT',
      timeframe: '1M',
      lookback: 60,
    });
    expect(handler.validateInputs(run, 'ohlcv_export:1w', stepOf(run, 'ohlcv_export:1w'))).toEqual({
      symbol: 'BTC/USDT',
      timeframe: '1w',
      lookback: 104,
    });
  });

  it('defaults symbol to run.scope.symbol, timeframe to the step’s, lookback per timeframe', () => {
    const run = oneStepRun('4h', {}, 'ETH-USDT');
    expect(handler.validateInputs(run, 'ohlcv_export:4h', stepOf(run, 'ohlcv_export:4h'))).toEqual({
      symbol: 'ETH-USDT',
      timeframe: '4h',
      lookback: DEFAULT_LOOKBACK['4h'],
    });
  });

  it('accepts lookback 1 and MAX_LOOKBACK', () => {
    for (const lookback of [1, MAX_LOOKBACK]) {
      const run = oneStepRun('1h', { lookback });
      expect(
        handler.validateInputs(run, 'ohlcv_export:1h', stepOf(run, 'ohlcv_export:1h')).lookback,
      ).toBe(lookback);
    }
  });

  it('names every problem in one StepInputError (INVALID_STEP_INPUTS, not retryable)', () => {
    const run = oneStepRun('1d', { symbol: 'BTC USDT', timeframe: '1w', lookback: 1001 });
    const error = caught(() =>
      handler.validateInputs(run, 'ohlcv_export:1d', stepOf(run, 'ohlcv_export:1d')),
    );
    expect(error).toBeInstanceOf(StepInputError);
    expect(error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      retryable: false,
      details: {
        stepId: 'ohlcv_export:1d',
        problems: [
          {
            field: 'symbol',
            problem: "must be a symbol like BTC-USDT, BTC/USDT or BTCUSDT (got 'BTC USDT')",
          },
          { field: 'timeframe', problem: "must equal the step's timeframe 1d (got 1w)" },
          { field: 'lookback', problem: 'must be an integer from 1 to 1000 (got 1001)' },
        ],
      },
    });
    expect((error as StepInputError).message).toMatch(
      /^invalid OHLCV_EXPORT inputs for ohlcv_export:1d: symbol/,
    );
  });

  it('rejects bad lookbacks, unknown timeframes, a missing timeframe and non-object inputs', () => {
    const problemsOf = (run: FlowRun, stepId: string): unknown =>
      (caught(() => handler.validateInputs(run, stepId, stepOf(run, stepId))) as StepInputError)
        .details?.['problems'];
    for (const lookback of [0, -5, 2.5, '120', null]) {
      expect(problemsOf(oneStepRun('1h', { lookback }), 'ohlcv_export:1h')).toEqual([
        {
          field: 'lookback',
          problem: expect.stringMatching(/^must be an integer from 1 to 1000/) as unknown,
        },
      ]);
    }
    expect(problemsOf(oneStepRun('1h', { symbol: null }), 'ohlcv_export:1h')).toEqual([
      {
        field: 'symbol',
        problem: 'must be a symbol like BTC-USDT, BTC/USDT or BTCUSDT (got null)',
      },
    ]);
    expect(problemsOf(oneStepRun('1h', { timeframe: '15m' }), 'ohlcv_export:1h')).toEqual([
      { field: 'timeframe', problem: "must be one of 1h, 4h, 1d, 1w, 1M (got '15m')" },
    ]);
    expect(problemsOf(oneStepRun(undefined, {}), 'ohlcv_export:x')).toEqual([
      { field: 'timeframe', problem: 'missing (neither inputs nor step have one)' },
    ]);
    expect(problemsOf(oneStepRun('1h', ['BTC']), 'ohlcv_export:1h')).toEqual([
      { field: 'inputs', problem: 'must be an object' },
    ]);
  });

  it('takes the timeframe from the inputs when the step has none', () => {
    const run = oneStepRun(undefined, { timeframe: '1d' });
    expect(
      handler.validateInputs(run, 'ohlcv_export:x', stepOf(run, 'ohlcv_export:x')),
    ).toMatchObject({
      timeframe: '1d',
      lookback: DEFAULT_LOOKBACK['1d'],
    });
  });
});

describe('OhlcvExportHandler.execute (bundled data)', () => {
  const handler = new OhlcvExportHandler({ candles: bundled });

  it('writes a schema-valid ohlcv_export at the deterministic URI', async () => {
    const run = flowRun('BTC/USDT');
    const { result, artifact, parsed, heartbeats } = await exportOf(
      handler,
      run,
      'ohlcv_export:1M',
    );
    const uri = `gs://tda-artifacts/runs/${run.runId}/1M/ohlcv_export:1M.json`;
    expect(result.primaryUri).toBe(uri);
    expect(artifact).toMatchObject({ uri, contentType: 'application/json' });
    expect(validate.ohlcvExport(parsed).ok).toBe(true);
    expect(parsed).toMatchObject({
      schemaVersion: 1,
      runId: run.runId,
      stepId: 'ohlcv_export:1M',
      symbol: 'BTC/USDT',
      timeframe: '1M',
      // BTC-USDT months come from the long Yahoo history, and the artifact says so
      source: {
        provider: 'bundled',
        dataset: 'yahoo/BTC-USD_1d',
        marketSymbol: 'BTC-USD',
        sourceTimeframe: '1d',
        volumeUnit: 'quote',
      },
      candleCount: 60,
      incompleteBucketPolicy: 'marked',
      // 59 whole months + March 2022 (one day of data): still forming
      range: { from: '2017-04-01T00:00:00Z', to: '2022-04-01T00:00:00Z' },
    });
    expect(parsed.candles).toHaveLength(60);
    expect(parsed.candles.at(-1)).toMatchObject({
      openTime: '2022-03-01T00:00:00Z',
      complete: false,
    });
    expect(parsed.candles.filter((c) => 'complete' in c)).toHaveLength(1);
    expect(result.execution).toEqual({
      marketData: {
        provider: 'bundled',
        dataset: 'yahoo/BTC-USD_1d',
        marketSymbol: 'BTC-USD',
        candleCount: 60,
        range: { from: '2017-04-01T00:00:00Z', to: '2022-04-01T00:00:00Z' },
      },
    });
    expect(heartbeats).toEqual([{ stage: 'fetch_candles' }]);
  });

  it('produces byte-identical artifacts on re-execution, whatever the clock says', async () => {
    const run = flowRun('BTC-USDT');
    const first = contextFor(handler, run, 'ohlcv_export:1w', new Date('2026-11-21T08:00:05Z'));
    const second = contextFor(
      new OhlcvExportHandler({ candles: new BundledCandleSource() }),
      run,
      'ohlcv_export:1w',
      new Date('2027-01-01T00:00:00Z'),
    );
    const a = (await handler.execute(first.context)).artifacts[0]?.data;
    const b = (await handler.execute(second.context)).artifacts[0]?.data;
    expect(a).toBeDefined();
    expect(b?.equals(a ?? Buffer.alloc(0))).toBe(true);
    // create-only store: writing the re-execution's bytes again is an idempotent success
    const store = new InMemoryArtifactStore();
    const uri = first.context.artifactUri('.json');
    await store.put(uri, a ?? Buffer.alloc(0), { contentType: 'application/json' });
    expect(
      (await store.put(uri, b ?? Buffer.alloc(0), { contentType: 'application/json' })).created,
    ).toBe(false);
  });

  it('reproduces the contract examples byte-for-byte in content and key order', async () => {
    for (const [file, policy] of [
      ['ohlcv_export.example.json', 'dropped'],
      ['ohlcv_export.1w-marked.example.json', 'marked'],
    ] as const) {
      const example = JSON.parse(readFileSync(join(EXAMPLES, file), 'utf8')) as OhlcvExport;
      const run = makeRun(
        {
          [example.stepId]: {
            timeframe: example.timeframe,
            inputs: { lookback: example.candleCount },
          },
        },
        { runId: example.runId, scope: { symbol: example.symbol } },
      );
      const { artifact } = await exportOf(
        new OhlcvExportHandler({ candles: bundled, incompleteBucketPolicy: policy }),
        run,
        example.stepId,
      );
      expect(artifact.data.toString('utf8')).toBe(`${JSON.stringify(example, null, 2)}\n`);
    }
  });

  it('trims to the lookback, newest candles last', async () => {
    const run = oneStepRun('1h', { lookback: 3 });
    const { parsed } = await exportOf(handler, run, 'ohlcv_export:1h');
    expect(parsed.candles.map((c) => c.openTime)).toEqual([
      '2026-09-20T08:00:00Z',
      '2026-09-20T09:00:00Z',
      '2026-09-20T10:00:00Z',
    ]);
    expect(parsed).toMatchObject({
      candleCount: 3,
      range: { from: '2026-09-20T08:00:00Z', to: '2026-09-20T11:00:00Z' },
      source: { dataset: 'binance/BTCUSDT_1h', volumeUnit: 'base' },
    });
    // 1h rows are served as they are
    expect(parsed.source).not.toHaveProperty('sourceTimeframe');
    expect(parsed.candles[2]).toEqual({
      openTime: '2026-09-20T10:00:00Z',
      open: 80470.01,
      high: 80515.83,
      low: 80319.58,
      close: 80319.58,
      volume: 199.82514,
    });
  });

  it("with policy 'dropped' every candle is complete", async () => {
    const dropping = new OhlcvExportHandler({
      candles: bundled,
      incompleteBucketPolicy: 'dropped',
    });
    const { parsed } = await exportOf(
      dropping,
      oneStepRun('4h', { lookback: 2 }, 'ETH/USDT'),
      'ohlcv_export:4h',
    );
    expect(parsed.incompleteBucketPolicy).toBe('dropped');
    expect(parsed.candles.map((c) => c.openTime)).toEqual([
      '2026-09-20T00:00:00Z',
      '2026-09-20T04:00:00Z',
    ]);
    expect(parsed.candles.some((c) => 'complete' in c)).toBe(false);
  });

  it('unknown symbol → StepInputError naming the available symbols', async () => {
    const run = oneStepRun('1d', {}, 'DOGE-USDT');
    const error = await rejection(
      handler.execute(contextFor(handler, run, 'ohlcv_export:1d').context),
    );
    expect(error).toBeInstanceOf(StepInputError);
    expect(error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      retryable: false,
      message: "unknown symbol 'DOGE-USDT'; available: BTC-USD, BTC-USDT, ETH-USDT",
      details: { availableSymbols: ['BTC-USD', 'BTC-USDT', 'ETH-USDT'] },
    });
  });

  it('unsupported timeframe → StepInputError naming that symbol’s timeframes', async () => {
    const run = oneStepRun('1h', {}, 'BTC-USD');
    const error = await rejection(
      handler.execute(contextFor(handler, run, 'ohlcv_export:1h').context),
    );
    expect(error).toBeInstanceOf(StepInputError);
    expect(error).toMatchObject({
      message: "timeframe '1h' is not available for 'BTC-USD'; available: 1d, 1w, 1M",
      details: { availableTimeframes: ['1d', '1w', '1M'] },
    });
  });

  it('stops on an aborted signal', async () => {
    const { context, controller } = contextFor(handler, flowRun('BTC-USDT'), 'ohlcv_export:1M');
    controller.abort({ kind: 'cancelled' });
    await expect(handler.execute(context)).rejects.toEqual({ kind: 'cancelled' });
  });
});

describe('OhlcvExportHandler.execute: market data problems', () => {
  it('ccxt rate limit → StepError MARKET_DATA_UNAVAILABLE, retryable', async () => {
    const exchange: CcxtExchangeLike = {
      id: 'binance',
      timeframes: { '1h': '1h' },
      loadMarkets: async () => ({
        'BTC/USDT': { id: 'BTCUSDT', symbol: 'BTC/USDT', base: 'BTC', quote: 'USDT', spot: true },
      }),
      fetchOHLCV: () => Promise.reject(new RateLimitExceeded('binance 429 Too Many Requests')),
    };
    const handler = new OhlcvExportHandler({ candles: new CcxtCandleSource({ exchange }) });
    const error = await rejection(
      handler.execute(contextFor(handler, oneStepRun('1h', {}), 'ohlcv_export:1h').context),
    );
    expect(error).toBeInstanceOf(StepError);
    expect(error).not.toBeInstanceOf(StepInputError);
    expect(error).toMatchObject({
      code: 'MARKET_DATA_UNAVAILABLE',
      retryable: true,
      details: { exchange: 'binance', errorClass: 'RateLimitExceeded' },
    });
    expect((error as StepError).cause).toBeInstanceOf(MarketDataUnavailableError);
  });

  it('no candles → MARKET_DATA_UNAVAILABLE, not retryable', async () => {
    const handler = new OhlcvExportHandler({ candles: new FixedSource(fixedSeries([])) });
    const error = await rejection(
      handler.execute(contextFor(handler, oneStepRun('1h', {}), 'ohlcv_export:1h').context),
    );
    expect(error).toMatchObject({
      code: 'MARKET_DATA_UNAVAILABLE',
      retryable: false,
      message: 'no 1h candles for BTC-USDT from bundled dataset binance/BTCUSDT_1h',
    });
  });

  it('inconsistent candles (high below close) → MARKET_DATA_UNAVAILABLE naming the candle', async () => {
    const bad = {
      openTime: Date.parse('2026-09-20T10:00:00Z'),
      open: 10,
      high: 11,
      low: 9,
      close: 12,
      volume: 1,
    };
    const handler = new OhlcvExportHandler({ candles: new FixedSource(fixedSeries([bad])) });
    const error = await rejection(
      handler.execute(contextFor(handler, oneStepRun('1h', {}), 'ohlcv_export:1h').context),
    );
    expect(error).toMatchObject({
      code: 'MARKET_DATA_UNAVAILABLE',
      retryable: false,
      details: {
        problems: ['candle 0 (2026-09-20T10:00:00.000Z): high/low do not bracket open/close'],
      },
    });
  });

  it('passes lookback, policy and the step’s signal to the source', async () => {
    const candle = {
      openTime: Date.parse('2026-09-20T10:00:00Z'),
      open: 10,
      high: 11,
      low: 9,
      close: 10,
      volume: 1,
    };
    const source = new FixedSource(fixedSeries([candle]));
    const handler = new OhlcvExportHandler({ candles: source, incompleteBucketPolicy: 'dropped' });
    const { context } = contextFor(handler, oneStepRun('1h', { lookback: 7 }), 'ohlcv_export:1h');
    await handler.execute(context);
    expect(source.requests).toEqual([
      {
        symbol: 'BTC-USDT',
        timeframe: '1h',
        limit: 7,
        incompleteBucketPolicy: 'dropped',
        signal: context.signal,
      },
    ]);
  });
});

describe('OhlcvExportHandler.recover', () => {
  const handler = new OhlcvExportHandler({ candles: bundled });

  async function written(run: FlowRun, stepId: string) {
    const harnessed = contextFor(handler, run, stepId);
    const result = await handler.execute(harnessed.context);
    const uri = result.primaryUri;
    return { ...harnessed, uri, data: result.artifacts[0]?.data ?? Buffer.alloc(0) };
  }

  it('vouches for a valid artifact of this run and step', async () => {
    const run = flowRun('BTC-USDT');
    const { context, store, uri, data } = await written(run, 'ohlcv_export:1w');
    await store.put(uri, data, { contentType: 'application/json' });
    const result = await handler.recover({ ...context, existingUri: uri });
    expect(result).toMatchObject({
      artifacts: [],
      primaryUri: uri,
      execution: { marketData: { provider: 'bundled', candleCount: 104 } },
    });
  });

  it('refuses (null) a corrupt artifact or one of another step', async () => {
    const run = flowRun('BTC-USDT');
    const { context, store, uri } = await written(run, 'ohlcv_export:1w');
    await store.put(uri, Buffer.from('{"truncated":'), { contentType: 'application/json' });
    expect(await handler.recover({ ...context, existingUri: uri })).toBeNull();

    const other = await written(run, 'ohlcv_export:1M');
    const otherUri = 'gs://tda-artifacts/runs/elsewhere.json';
    await other.store.put(otherUri, other.data, { contentType: 'application/json' });
    expect(
      await handler.recover({ ...context, artifacts: other.store, existingUri: otherUri }),
    ).toBeNull();
  });
});
