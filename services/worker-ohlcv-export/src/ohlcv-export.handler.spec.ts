import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InMemoryArtifactStore } from '@tda/artifacts';
import {
  TdaError,
  TIMEFRAMES,
  validate,
  type ErrorInfo,
  type FlowRun,
  type OhlcvExport,
  type Timeframe,
} from '@tda/contracts';
import { createRun, DEFAULT_LOOKBACK } from '@tda/flow-engine';
import { makeRun, seededRandom } from '@tda/flow-engine/testing';
import {
  AsOfOutOfRangeError,
  BundledCandleSource,
  CcxtCandleSource,
  MarketDataError,
  MarketDataUnavailableError,
  UnknownSymbolError,
  UnsupportedTimeframeError,
  type CandleSeries,
  type CandleSource,
  type CcxtExchangeLike,
  type DataCoverage,
  type FetchCandlesRequest,
} from '@tda/market-data';
import { OHLCV_EXPORT_STEP, ohlcvExportProblem } from '@tda/step-types';
import { StepError, StepInputError, type StepContext, type StepHeartbeat } from '@tda/worker-kit';
import { handlerContext, requireHandlerContext } from '@tda/worker-kit/testing';
import { RateLimitExceeded } from 'ccxt';
import { rejectionOf } from '@tda/test-support';
import { describe, expect, it } from 'vitest';
import { OhlcvExportHandler, requestOf } from './ohlcv-export.handler';
import { replayExchange } from './testing/recorded-exchange';

const bundled = new BundledCandleSource();
const EXAMPLES = join(__dirname, '../../../contracts/examples');

type Context = StepContext<typeof OHLCV_EXPORT_STEP>;

function flowRun(symbol: string, now = new Date('2026-11-21T08:00:00Z'), asOf?: string): FlowRun {
  return createRun({
    flowKey: 'scheduled_month_week_report_v1',
    scope: asOf === undefined ? { symbol } : { symbol, asOf },
    ownerId: 'user-1',
    trigger: { type: 'SCHEDULER', source: 'test' },
    now,
    random: seededRandom(1),
  });
}

/** A run with one OHLCV step of the given timeframe and inputs (and the run's scope.asOf). */
function oneStepRun(
  timeframe: Timeframe | undefined,
  inputs: unknown,
  symbol = 'BTC-USDT',
  asOf?: string,
): FlowRun {
  const stepId = `ohlcv_export:${timeframe ?? 'x'}`;
  const run = makeRun(
    { [stepId]: timeframe === undefined ? {} : { timeframe } },
    { scope: asOf === undefined ? { symbol } : { symbol, asOf } },
  );
  const step = run.steps[stepId];
  if (step !== undefined) step.inputs = inputs as Record<string, unknown>;
  return run;
}

interface Harnessed {
  context: Context;
  heartbeats: Array<Parameters<StepHeartbeat>[0]>;
  controller: AbortController;
  store: InMemoryArtifactStore;
}

/** The context the harness would hand the handler (inputs validated by the step type's schema). */
function contextFor(
  run: FlowRun,
  stepId: string,
  now = new Date('2026-11-21T08:00:05Z'),
): Harnessed {
  const heartbeats: Harnessed['heartbeats'] = [];
  const controller = new AbortController();
  const store = new InMemoryArtifactStore();
  const context = requireHandlerContext(OHLCV_EXPORT_STEP, {
    run,
    stepId,
    artifacts: store,
    signal: controller.signal,
    deadline: new Date(now.getTime() + 60_000),
    now: () => now,
    heartbeat: (progress) => {
      heartbeats.push(progress);
    },
  });
  return { context, heartbeats, controller, store };
}

/** What the harness refuses before the handler runs (the step would be FAILED with it). */
function refusal(run: FlowRun, stepId: string): ErrorInfo {
  const built = handlerContext(OHLCV_EXPORT_STEP, {
    run,
    stepId,
    artifacts: new InMemoryArtifactStore(),
  });
  if (built.ok) throw new Error(`expected the inputs of ${stepId} to be refused`);
  return built.error;
}

/** The schema issues of a refusal: [path, keyword] pairs. */
function issuesOf(error: ErrorInfo): unknown {
  const issues = error.details?.['issues'] as { path: string; keyword: string }[] | undefined;
  return issues?.map((i) => [i.path, i.keyword]);
}

async function exportOf(handler: OhlcvExportHandler, run: FlowRun, stepId: string) {
  const { context, heartbeats } = contextFor(run, stepId);
  const result = await handler.execute(context);
  const [artifact] = result.artifacts;
  if (artifact === undefined) throw new Error('no artifact');
  const parsed = JSON.parse(artifact.data.toString('utf8')) as OhlcvExport;
  return { result, artifact, parsed, heartbeats };
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
  async coverage(symbol: string, timeframe: Timeframe): Promise<DataCoverage> {
    return { symbol, timeframe, from: null, to: Date.parse('2026-09-20T11:00:00Z'), source: 'x' };
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

describe('OHLCV_EXPORT inputs (ohlcv_export_inputs schema, then the handler’s defaults)', () => {
  const handler = new OhlcvExportHandler({ candles: bundled });
  const requestFor = (run: FlowRun, stepId: string) => requestOf(contextFor(run, stepId).context);

  it('reads the inputs the flow catalogue writes', () => {
    const run = flowRun('BTC/USDT');
    expect(requestFor(run, 'ohlcv_export:1M')).toEqual({
      symbol: 'BTC/USDT',
      timeframe: '1M',
      lookback: 60,
    });
    expect(requestFor(run, 'ohlcv_export:1w')).toEqual({
      symbol: 'BTC/USDT',
      timeframe: '1w',
      lookback: 104,
    });
  });

  it('defaults symbol to run.scope.symbol, timeframe to the step’s, lookback per timeframe', () => {
    const run = oneStepRun('4h', {}, 'ETH-USDT');
    expect(requestFor(run, 'ohlcv_export:4h')).toEqual({
      symbol: 'ETH-USDT',
      timeframe: '4h',
      lookback: DEFAULT_LOOKBACK['4h'],
    });
  });

  it('accepts lookback 1 and 1000 (the schema bounds)', () => {
    for (const lookback of [1, 1000]) {
      expect(requestFor(oneStepRun('1h', { lookback }), 'ohlcv_export:1h').lookback).toBe(lookback);
    }
  });

  it('refuses schema violations before the handler runs, naming the schema path of each (INVALID_STEP_INPUTS, not retryable)', () => {
    const error = refusal(
      oneStepRun('1d', { symbol: 'BTC USDT', timeframe: '1w', lookback: 1001 }),
      'ohlcv_export:1d',
    );
    expect(error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      retryable: false,
      details: { contract: 'ohlcv_export_inputs' },
    });
    expect(error.message).toMatch(
      /^inputs of ohlcv_export:1d violate ohlcv_export_inputs\.schema\.json: \/symbol 'BTC USDT' does not match the required pattern/,
    );
    // Every schema problem is listed; the timeframe is a valid one (its rule is the handler’s).
    expect(issuesOf(error)).toEqual([
      ['/symbol', 'pattern'],
      ['/lookback', 'maximum'],
    ]);
  });

  it('refuses bad lookbacks, a bad symbol, unknown timeframes and non-object inputs', () => {
    for (const [lookback, keyword] of [
      [0, 'minimum'],
      [-5, 'minimum'],
      [1001, 'maximum'],
      [2.5, 'type'],
      ['120', 'type'],
      [null, 'type'],
    ] as const) {
      const error = refusal(oneStepRun('1h', { lookback }), 'ohlcv_export:1h');
      expect(error.code).toBe('INVALID_STEP_INPUTS');
      expect(issuesOf(error)).toEqual([['/lookback', keyword]]);
      expect(error.message).toContain('ohlcv_export_inputs.schema.json: /lookback');
    }
    const nullSymbol = refusal(oneStepRun('1h', { symbol: null }), 'ohlcv_export:1h');
    expect(issuesOf(nullSymbol)).toEqual([['/symbol', 'type']]);
    expect(nullSymbol.message).toMatch(/: \/symbol must be string$/);
    const minutes = refusal(oneStepRun('1h', { timeframe: '15m' }), 'ohlcv_export:1h');
    expect(issuesOf(minutes)).toEqual([['/timeframe', 'enum']]);
    expect(minutes.message).toContain("/timeframe '15m' must be one of");
    const array = refusal(oneStepRun('1h', ['BTC']), 'ohlcv_export:1h');
    expect(issuesOf(array)).toEqual([['/', 'type']]);
    expect(array.message).toMatch(/: \/ must be object$/);
  });

  it('tolerates extra input fields (seed 002 validation policy)', () => {
    const run = oneStepRun('1h', { lookback: 3, note: 'from an older catalogue' });
    expect(requestFor(run, 'ohlcv_export:1h')).toEqual({
      symbol: 'BTC-USDT',
      timeframe: '1h',
      lookback: 3,
    });
  });

  it("inputs.timeframe other than the step's → StepInputError from execute, before any fetch", async () => {
    const source = new FixedSource(fixedSeries([]));
    const strict = new OhlcvExportHandler({ candles: source });
    const { context } = contextFor(oneStepRun('1d', { timeframe: '1w' }), 'ohlcv_export:1d');
    const error = await rejectionOf(strict.execute(context));
    expect(error).toBeInstanceOf(StepInputError);
    expect(error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      retryable: false,
      message: "inputs.timeframe must equal the step's timeframe 1d (got 1w)",
      details: { field: 'timeframe' },
    });
    expect(source.requests).toEqual([]);
  });

  it('a timeframe in neither the inputs nor the step → StepInputError from execute', async () => {
    const { context } = contextFor(oneStepRun(undefined, {}), 'ohlcv_export:x');
    const error = await rejectionOf(handler.execute(context));
    expect(error).toBeInstanceOf(StepInputError);
    expect(error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      retryable: false,
      message: 'inputs.timeframe is missing (neither inputs nor step have one)',
      details: { field: 'timeframe' },
    });
  });

  it('takes the timeframe from the inputs when the step has none', () => {
    const run = oneStepRun(undefined, { timeframe: '1d' });
    expect(requestFor(run, 'ohlcv_export:x')).toMatchObject({
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
      // a run without scope.asOf (created before it existed): described up to its data's end
      asOf: '2026-10-01T00:00:00Z',
      // BTC-USDT months come from the Binance daily file, and the artifact says so
      source: {
        provider: 'bundled',
        dataset: 'binance/BTCUSDT_1d',
        marketSymbol: 'BTCUSDT',
        sourceTimeframe: '1d',
        volumeUnit: 'base',
      },
      candleCount: 60,
      incompleteBucketPolicy: 'marked',
      // 59 whole months + September 2026 (19 days of data): still forming
      range: { from: '2021-10-01T00:00:00Z', to: '2026-10-01T00:00:00Z' },
    });
    expect(parsed.candles).toHaveLength(60);
    expect(parsed.candles.at(-1)).toMatchObject({
      openTime: '2026-09-01T00:00:00Z',
      complete: false,
    });
    expect(parsed.candles.filter((c) => 'complete' in c)).toHaveLength(1);
    expect(result.execution).toEqual({
      marketData: {
        provider: 'bundled',
        dataset: 'binance/BTCUSDT_1d',
        marketSymbol: 'BTCUSDT',
        candleCount: 60,
        range: { from: '2021-10-01T00:00:00Z', to: '2026-10-01T00:00:00Z' },
      },
    });
    expect(heartbeats).toEqual([{ stage: 'fetch_candles' }]);
  });

  it('produces byte-identical artifacts on re-execution, whatever the clock says', async () => {
    const run = flowRun('BTC-USDT');
    const first = contextFor(run, 'ohlcv_export:1w', new Date('2026-11-21T08:00:05Z'));
    const second = contextFor(run, 'ohlcv_export:1w', new Date('2027-01-01T00:00:00Z'));
    const a = (await handler.execute(first.context)).artifacts[0]?.data;
    const b = (
      await new OhlcvExportHandler({ candles: new BundledCandleSource() }).execute(second.context)
    ).artifacts[0]?.data;
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
        { runId: example.runId, scope: { symbol: example.symbol, asOf: example.asOf } },
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

  // The source's own coded errors reach the harness as they are (it maps any TdaError by its
  // code): the handler does not re-wrap them.
  it('unknown symbol → the source’s INVALID_STEP_INPUTS naming the available symbols', async () => {
    const run = oneStepRun('1d', {}, 'DOGE-USDT');
    const error = await rejectionOf(handler.execute(contextFor(run, 'ohlcv_export:1d').context));
    expect(error).toBeInstanceOf(UnknownSymbolError);
    expect(error).toBeInstanceOf(MarketDataError);
    expect(error).toBeInstanceOf(TdaError);
    expect(error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      retryable: false,
      message: "unknown symbol 'DOGE-USDT'; available: BTC-USDT, ETH-USDT",
      details: { availableSymbols: ['BTC-USDT', 'ETH-USDT'] },
    });
  });

  it('unsupported timeframe → the source’s INVALID_STEP_INPUTS naming that symbol’s timeframes', async () => {
    // every bundled symbol has every timeframe: a daily-only catalogue shows the refusal
    const daily = new OhlcvExportHandler({
      candles: new BundledCandleSource({
        catalogue: [
          {
            symbol: 'BTC-USDT',
            aliases: [],
            datasets: { '1d': 'binance/BTCUSDT_1d', '1w': 'binance/BTCUSDT_1d' },
          },
        ],
      }),
    });
    const run = oneStepRun('1h', {}, 'BTC-USDT');
    const error = await rejectionOf(daily.execute(contextFor(run, 'ohlcv_export:1h').context));
    expect(error).toBeInstanceOf(UnsupportedTimeframeError);
    expect(error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      retryable: false,
      message: "timeframe '1h' is not available for 'BTC-USDT'; available: 1d, 1w",
      details: { availableTimeframes: ['1d', '1w'] },
    });
  });

  it('stops on an aborted signal', async () => {
    const { context, controller } = contextFor(flowRun('BTC-USDT'), 'ohlcv_export:1M');
    controller.abort({ kind: 'cancelled' });
    await expect(handler.execute(context)).rejects.toEqual({ kind: 'cancelled' });
  });
});

describe('OhlcvExportHandler.execute: market data problems', () => {
  it('ccxt rate limit → the source’s MARKET_DATA_UNAVAILABLE, retryable, as it is', async () => {
    const exchange: CcxtExchangeLike = {
      id: 'binance',
      timeframes: { '1h': '1h' },
      loadMarkets: async () => ({
        'BTC/USDT': { id: 'BTCUSDT', symbol: 'BTC/USDT', base: 'BTC', quote: 'USDT', spot: true },
      }),
      fetchOHLCV: () => Promise.reject(new RateLimitExceeded('binance 429 Too Many Requests')),
    };
    const handler = new OhlcvExportHandler({ candles: new CcxtCandleSource({ exchange }) });
    const error = await rejectionOf(
      handler.execute(contextFor(oneStepRun('1h', {}), 'ohlcv_export:1h').context),
    );
    expect(error).toBeInstanceOf(MarketDataUnavailableError);
    expect(error).toMatchObject({
      code: 'MARKET_DATA_UNAVAILABLE',
      retryable: true,
      details: { exchange: 'binance', errorClass: 'RateLimitExceeded' },
    });
    expect((error as MarketDataUnavailableError).cause).toBeInstanceOf(RateLimitExceeded);
  });

  it('no candles → MARKET_DATA_UNAVAILABLE, not retryable', async () => {
    const handler = new OhlcvExportHandler({ candles: new FixedSource(fixedSeries([])) });
    const error = await rejectionOf(
      handler.execute(contextFor(oneStepRun('1h', {}), 'ohlcv_export:1h').context),
    );
    expect(error).toBeInstanceOf(StepError);
    expect(error).toMatchObject({
      code: 'MARKET_DATA_UNAVAILABLE',
      retryable: false,
      message: 'no 1h candles for BTC-USDT from bundled dataset binance/BTCUSDT_1h',
      details: { symbol: 'BTC-USDT', timeframe: '1h' },
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
    const error = await rejectionOf(
      handler.execute(contextFor(oneStepRun('1h', {}), 'ohlcv_export:1h').context),
    );
    expect(error).toBeInstanceOf(StepError);
    expect(error).toMatchObject({
      code: 'MARKET_DATA_UNAVAILABLE',
      retryable: false,
      message: 'bundled dataset binance/BTCUSDT_1h returned inconsistent candles for BTC-USDT 1h',
      details: {
        problems: ['candle 0 (2026-09-20T10:00:00.000Z): high/low do not bracket open/close'],
        problemCount: 1,
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
    const { context } = contextFor(oneStepRun('1h', { lookback: 7 }), 'ohlcv_export:1h');
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

  /** The export an earlier attempt wrote, as the harness hands it over after validating it. */
  async function existing(run: FlowRun, stepId: string) {
    const { context } = contextFor(run, stepId);
    const result = await handler.execute(context);
    const bytes = result.artifacts[0]?.data ?? Buffer.alloc(0);
    const checked = validate.ohlcvExport(JSON.parse(bytes.toString('utf8')));
    if (!checked.ok) throw new Error('the export is invalid');
    return { context, uri: result.primaryUri, artifact: checked.value, bytes };
  }

  it('vouches for an export of these very inputs, without fetching', async () => {
    const run = flowRun('BTC-USDT');
    const { context, uri, artifact, bytes } = await existing(run, 'ohlcv_export:1w');
    const source = new FixedSource(fixedSeries([]));
    const result = await new OhlcvExportHandler({ candles: source }).recover(
      { uri, artifact, bytes },
      context,
    );
    expect(result).toEqual({
      artifacts: [],
      primaryUri: uri,
      execution: {
        marketData: {
          provider: 'bundled',
          dataset: 'binance/BTCUSDT_1d',
          marketSymbol: 'BTCUSDT',
          candleCount: 104,
          range: artifact.range,
        },
      },
    });
    expect(source.requests).toEqual([]);
  });

  it('refuses (null: execute again) an export of other inputs: symbol, timeframe or a larger lookback', async () => {
    const run = flowRun('BTC-USDT');
    const { context, uri, artifact, bytes } = await existing(run, 'ohlcv_export:1w');
    const recoverWith = (changed: OhlcvExport) =>
      handler.recover({ uri, artifact: changed, bytes }, context);
    expect(await recoverWith({ ...artifact, symbol: 'ETH-USDT' })).toBeNull();
    expect(await recoverWith({ ...artifact, timeframe: '1M' })).toBeNull();
    // more candles than the inputs ask for now (lookback 104)
    expect(await recoverWith({ ...artifact, candleCount: 105 })).toBeNull();
    // the same export is vouched for
    expect(await recoverWith(artifact)).not.toBeNull();
  });

  it('refuses when the inputs now ask for fewer candles than the export holds', async () => {
    const run = flowRun('BTC-USDT');
    const { uri, artifact, bytes } = await existing(run, 'ohlcv_export:1w');
    const fewer = oneStepRun('1w', { lookback: 10 });
    const { context } = contextFor({ ...fewer, runId: run.runId }, 'ohlcv_export:1w');
    expect(await handler.recover({ uri, artifact, bytes }, context)).toBeNull();
  });
});

describe('OhlcvExportHandler with the run’s scope.asOf (one moment for every timeframe)', () => {
  const handler = new OhlcvExportHandler({ candles: bundled });
  const DEFAULT_AS_OF = '2026-09-20T00:00:00Z';
  const EARLIER_AS_OF = '2026-06-15T13:00:00Z';

  /** The end of the last candle ('marked' export). */
  const lastEnd = (parsed: OhlcvExport): number => Date.parse(parsed.range.to);

  for (const asOf of [DEFAULT_AS_OF, EARLIER_AS_OF]) {
    for (const symbol of ['BTC-USDT', 'ETH-USDT']) {
      for (const timeframe of TIMEFRAMES) {
        it(`${symbol} ${timeframe} at ${asOf}: a valid export cut at asOf, no candle after it`, async () => {
          const run = oneStepRun(timeframe, {}, symbol, asOf);
          const { parsed } = await exportOf(handler, run, `ohlcv_export:${timeframe}`);
          expect(validate.ohlcvExport(parsed).ok).toBe(true);
          expect(parsed.asOf).toBe(asOf);
          // the descriptor check: complete candles end by asOf, the forming one opens before it
          expect(ohlcvExportProblem(parsed)).toBeUndefined();
          const forming = parsed.candles.filter((c) => c.complete === false);
          expect(forming.length).toBeLessThanOrEqual(1);
          if (forming.length === 1) {
            // the bucket holding asOf
            expect(Date.parse(parsed.candles.at(-1)?.openTime ?? '')).toBeLessThan(
              Date.parse(asOf),
            );
            expect(lastEnd(parsed)).toBeGreaterThan(Date.parse(asOf));
          } else {
            expect(lastEnd(parsed)).toBeLessThanOrEqual(Date.parse(asOf));
          }
        });
      }
    }
  }

  it('at the default asOf every 1h/4h/1d export ends exactly at asOf; 1w/1M hold it in their forming candle', async () => {
    const ends: Record<string, [string, boolean]> = {};
    for (const timeframe of TIMEFRAMES) {
      const run = oneStepRun(timeframe, {}, 'BTC-USDT', DEFAULT_AS_OF);
      const { parsed } = await exportOf(handler, run, `ohlcv_export:${timeframe}`);
      ends[timeframe] = [parsed.range.to, parsed.candles.at(-1)?.complete !== false];
    }
    expect(ends).toEqual({
      '1h': [DEFAULT_AS_OF, true],
      '4h': [DEFAULT_AS_OF, true],
      '1d': [DEFAULT_AS_OF, true],
      '1w': ['2026-09-21T00:00:00Z', false],
      '1M': ['2026-10-01T00:00:00Z', false],
    });
  });

  it('a flow-1 run: the 1M and 1w exports describe the same market up to the same moment', async () => {
    const run = flowRun('BTC-USDT', new Date('2026-11-21T08:00:00Z'), DEFAULT_AS_OF);
    const month = (await exportOf(handler, run, 'ohlcv_export:1M')).parsed;
    const week = (await exportOf(handler, run, 'ohlcv_export:1w')).parsed;
    expect([month.asOf, week.asOf]).toEqual([DEFAULT_AS_OF, DEFAULT_AS_OF]);
    expect([month.source.dataset, week.source.dataset]).toEqual([
      'binance/BTCUSDT_1d',
      'binance/BTCUSDT_1d',
    ]);
    // both end with the last day before asOf: the 2026-09-19 close
    expect(month.candles.at(-1)?.close).toBe(81249.99);
    expect(week.candles.at(-1)?.close).toBe(81249.99);
  });

  it('passes the asOf (epoch ms) to the source; a run without one asks the newest data', async () => {
    const candle = {
      openTime: Date.parse('2026-09-19T23:00:00Z'),
      open: 10,
      high: 11,
      low: 9,
      close: 10,
      volume: 1,
    };
    const source = new FixedSource(fixedSeries([candle]));
    const fixed = new OhlcvExportHandler({ candles: source });
    const withAsOf = await exportOf(
      fixed,
      oneStepRun('1h', {}, 'BTC-USDT', DEFAULT_AS_OF),
      'ohlcv_export:1h',
    );
    const without = await exportOf(fixed, oneStepRun('1h', {}), 'ohlcv_export:1h');
    expect(source.requests.map((r) => r.asOf)).toEqual([Date.parse(DEFAULT_AS_OF), undefined]);
    expect(source.requests[1]).not.toHaveProperty('asOf');
    expect(withAsOf.parsed.asOf).toBe(DEFAULT_AS_OF);
    // without asOf: the end of the data
    expect(without.parsed.asOf).toBe('2026-09-20T00:00:00Z');
    expect(without.parsed.range.to).toBe('2026-09-20T00:00:00Z');
  });

  it('an asOf the data cannot reach → the source’s AsOfOutOfRangeError (INVALID_REQUEST), as it is', async () => {
    const run = oneStepRun('1d', {}, 'BTC-USDT', '2026-09-20T06:00:00Z');
    const error = await rejectionOf(handler.execute(contextFor(run, 'ohlcv_export:1d').context));
    expect(error).toBeInstanceOf(AsOfOutOfRangeError);
    expect(error).toMatchObject({
      code: 'INVALID_REQUEST',
      retryable: false,
      details: {
        field: 'scope.asOf',
        timeframe: '1d',
        available: { from: '2017-08-17T00:00:00Z', to: '2026-09-20T00:00:00Z' },
      },
    });
  });

  it('ccxt (replayed Binance at 10:30): closed klines up to asOf, the forming bucket from closed hours', async () => {
    const now = Date.parse('2026-09-20T10:30:00Z');
    const exchange = replayExchange(now);
    const live = new OhlcvExportHandler({
      candles: new CcxtCandleSource({ exchange, now: () => now }),
    });
    const run = oneStepRun('1d', { lookback: 3 }, 'ETH/USDT', '2026-09-20T10:00:00Z');
    const { parsed } = await exportOf(live, run, 'ohlcv_export:1d');
    expect(ohlcvExportProblem(parsed)).toBeUndefined();
    expect(parsed).toMatchObject({
      asOf: '2026-09-20T10:00:00Z',
      source: { provider: 'ccxt', exchange: 'binance', marketSymbol: 'ETH/USDT' },
      range: { from: '2026-09-18T00:00:00Z', to: '2026-09-21T00:00:00Z' },
    });
    const hours = await bundled.fetchCandles({
      symbol: 'ETH-USDT',
      timeframe: '1h',
      from: Date.parse('2026-09-20T00:00:00Z'),
    });
    // 2026-09-20 from its hours 00:00..09:00 (the 10:00 kline was still forming: not used)
    const used = hours.candles.slice(0, 10);
    expect(parsed.candles.at(-1)).toEqual({
      openTime: '2026-09-20T00:00:00Z',
      open: used[0]?.open,
      high: Math.max(...used.map((c) => c.high)),
      low: Math.min(...used.map((c) => c.low)),
      close: used[9]?.close,
      volume: Number(used.reduce((sum, c) => sum + c.volume, 0).toFixed(8)),
      complete: false,
    });
    expect(exchange.calls.map((c) => [c.timeframe, c.since === undefined])).toEqual([
      ['1d', false],
      ['1h', false],
    ]);
  });
});

describe('OhlcvExportHandler.recover compares asOf', () => {
  const handler = new OhlcvExportHandler({ candles: bundled });

  async function exportAt(asOf: string) {
    const run = oneStepRun('1w', {}, 'BTC-USDT', asOf);
    const { artifact, parsed } = await exportOf(handler, run, 'ohlcv_export:1w');
    return { run, uri: artifact.uri, artifact: parsed, bytes: artifact.data };
  }

  it('vouches for an export cut at the run’s asOf, refuses one cut elsewhere', async () => {
    const { run, uri, artifact, bytes } = await exportAt('2026-09-20T00:00:00Z');
    const { context } = contextFor(run, 'ohlcv_export:1w');
    expect(await handler.recover({ uri, artifact, bytes }, context)).not.toBeNull();
    const other = await exportAt('2026-06-15T13:00:00Z');
    expect(
      await handler.recover({ uri, artifact: other.artifact, bytes: other.bytes }, context),
    ).toBeNull();
    // the same moment written another way is the same asOf
    const sameMoment = oneStepRun('1w', {}, 'BTC-USDT', '2026-09-20T00:00:00.000Z');
    expect(
      await handler.recover(
        { uri, artifact, bytes },
        contextFor({ ...sameMoment, runId: run.runId }, 'ohlcv_export:1w').context,
      ),
    ).not.toBeNull();
  });

  it('a run without asOf (created before it existed) vouches as before', async () => {
    const { uri, artifact, bytes } = await exportAt('2026-06-15T13:00:00Z');
    const old = oneStepRun('1w', {}, 'BTC-USDT');
    const { context } = contextFor(old, 'ohlcv_export:1w');
    expect(await handler.recover({ uri, artifact, bytes }, context)).not.toBeNull();
  });
});
