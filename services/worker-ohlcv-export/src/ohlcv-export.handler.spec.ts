import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InMemoryArtifactStore } from '@tda/artifacts';
import {
  TdaError,
  validate,
  type ErrorInfo,
  type FlowRun,
  type OhlcvExport,
  type Timeframe,
} from '@tda/contracts';
import { createRun, DEFAULT_LOOKBACK } from '@tda/flow-engine';
import { makeRun, seededRandom } from '@tda/flow-engine/testing';
import {
  BundledCandleSource,
  CcxtCandleSource,
  MarketDataError,
  MarketDataUnavailableError,
  UnknownSymbolError,
  UnsupportedTimeframeError,
  type CandleSeries,
  type CandleSource,
  type CcxtExchangeLike,
  type FetchCandlesRequest,
} from '@tda/market-data';
import { OHLCV_EXPORT_STEP } from '@tda/step-types';
import { StepError, StepInputError, type StepContext, type StepHeartbeat } from '@tda/worker-kit';
import { handlerContext, requireHandlerContext } from '@tda/worker-kit/testing';
import { RateLimitExceeded } from 'ccxt';
import { rejectionOf } from '@tda/test-support';
import { describe, expect, it } from 'vitest';
import { OhlcvExportHandler, requestOf } from './ohlcv-export.handler';

const bundled = new BundledCandleSource();
const EXAMPLES = join(__dirname, '../../../contracts/examples');

type Context = StepContext<typeof OHLCV_EXPORT_STEP>;

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
      message: "unknown symbol 'DOGE-USDT'; available: BTC-USD, BTC-USDT, ETH-USDT",
      details: { availableSymbols: ['BTC-USD', 'BTC-USDT', 'ETH-USDT'] },
    });
  });

  it('unsupported timeframe → the source’s INVALID_STEP_INPUTS naming that symbol’s timeframes', async () => {
    const run = oneStepRun('1h', {}, 'BTC-USD');
    const error = await rejectionOf(handler.execute(contextFor(run, 'ohlcv_export:1h').context));
    expect(error).toBeInstanceOf(UnsupportedTimeframeError);
    expect(error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      retryable: false,
      message: "timeframe '1h' is not available for 'BTC-USD'; available: 1d, 1w, 1M",
      details: { availableTimeframes: ['1d', '1w', '1M'] },
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
          dataset: 'yahoo/BTC-USD_1d',
          marketSymbol: 'BTC-USD',
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
