import { InMemoryArtifactStore } from '@tda/artifacts';
import {
  validate,
  type FlowRun,
  type OhlcvExport,
  type StepReadyMessage,
  type Timeframe,
} from '@tda/contracts';
import { advance, applyPatch, createRun } from '@tda/flow-engine';
import { seededRandom } from '@tda/flow-engine/testing';
import { InMemoryFlowRunStore } from '@tda/flow-store';
import {
  BundledCandleSource,
  CcxtCandleSource,
  type CandleSeries,
  type CandleSource,
  type CcxtExchangeLike,
  type DataCoverage,
  type FetchCandlesRequest,
} from '@tda/market-data';
import { createMemoryLogger } from '@tda/observability';
import { StepHarness, type StepHarnessPolicy } from '@tda/worker-kit';
import { RecordingPublisher } from '@tda/worker-kit/testing';
import { RateLimitExceeded } from 'ccxt';
import { describe, expect, it, vi } from 'vitest';
import { OhlcvExportHandler } from './ohlcv-export.handler';

/**
 * The OHLCV handler inside the real step harness (in-memory store, artifacts and publisher):
 * what the harness decides around it (recovery of an existing export, the mapping of the
 * source's coded errors, in-process retries).
 */
const NOW = new Date('2026-11-21T08:00:00Z');
const STEP_1W = 'ohlcv_export:1w';

/** A CandleSource decorator counting fetches. */
class CountingSource implements CandleSource {
  readonly provider: CandleSource['provider'];
  readonly requests: FetchCandlesRequest[] = [];
  constructor(private readonly inner: CandleSource) {
    this.provider = inner.provider;
  }
  listSymbols(): Promise<string[]> {
    return this.inner.listSymbols();
  }
  availableTimeframes(symbol: string): ReturnType<CandleSource['availableTimeframes']> {
    return this.inner.availableTimeframes(symbol);
  }
  fetchCandles(request: FetchCandlesRequest): Promise<CandleSeries> {
    this.requests.push(request);
    return this.inner.fetchCandles(request);
  }
  coverage(symbol: string, timeframe: Timeframe): Promise<DataCoverage> {
    return this.inner.coverage(symbol, timeframe);
  }
}

function readyRun(symbol = 'BTC-USDT'): FlowRun {
  const run = createRun({
    flowKey: 'scheduled_month_week_report_v1',
    scope: { symbol },
    ownerId: 'user-1',
    trigger: { type: 'SCHEDULER', source: 'test' },
    now: NOW,
    random: seededRandom(5),
  });
  return applyPatch(run, advance(run, NOW).patch);
}

function uriOf(run: FlowRun, timeframe: string, stepId: string): string {
  return `gs://tda-artifacts/runs/${run.runId}/${timeframe}/${stepId}.json`;
}

async function deliver(options: {
  run?: FlowRun;
  source?: CandleSource;
  /** Written at the step's primary URI before the delivery (an earlier attempt's artifact). */
  existing?: (run: FlowRun) => Promise<Buffer>;
  policy?: Partial<StepHarnessPolicy>;
}) {
  const run = options.run ?? readyRun();
  const clock = (): Date => NOW;
  const store = new InMemoryFlowRunStore({ clock });
  await store.create(run);
  const artifacts = new InMemoryArtifactStore();
  const uri = uriOf(run, '1w', STEP_1W);
  const existing = options.existing === undefined ? undefined : await options.existing(run);
  if (existing !== undefined) {
    await artifacts.put(uri, existing, { contentType: 'application/json' });
  }
  const source = new CountingSource(options.source ?? new BundledCandleSource());
  const handler = new OhlcvExportHandler({ candles: source });
  const recover = vi.spyOn(handler, 'recover');
  const harness = new StepHarness({
    handler,
    store,
    artifacts,
    publisher: new RecordingPublisher(),
    logger: createMemoryLogger().logger,
    clock,
    owner: 'ohlcv-worker-test',
    policy: { heartbeatMs: 30_000, ...options.policy },
    random: () => 0,
  });
  const message: StepReadyMessage = {
    runId: run.runId,
    stepId: STEP_1W,
    stepType: 'OHLCV_EXPORT',
    attempt: 0,
    dispatchedAt: NOW.toISOString(),
  };
  const outcome = await harness.handleStepReady(message, { deliveryAttempt: 1 });
  await harness.shutdown();
  const step = (await store.get(run.runId))?.run.steps[STEP_1W];
  if (step === undefined) throw new Error('step vanished');
  const bytes = (await artifacts.exists(uri)) ? await artifacts.read(uri) : null;
  return { run, outcome, step, source, recover, uri, bytes, existing };
}

/** The export this run's 1w step writes (what a crashed earlier attempt left behind). */
async function ownExport(run: FlowRun): Promise<Buffer> {
  const first = await deliver({ run });
  if (first.bytes === null) throw new Error('no export written');
  return first.bytes;
}

/** Executed again: the fresh bytes differ from what is there, and artifacts are create-only. */
function expectConflict(
  outcome: Awaited<ReturnType<typeof deliver>>['outcome'],
  step: Awaited<ReturnType<typeof deliver>>['step'],
): void {
  expect(outcome).toMatchObject({
    kind: 'failed',
    status: 'FAILED',
    errorCode: 'GCS_WRITE_FAILED',
    tries: 1,
  });
  expect(step.error).toMatchObject({
    code: 'GCS_WRITE_FAILED',
    retryable: false,
    details: { reason: 'artifact_conflict' },
  });
  expect(step.outputs.execution?.recoveredFromArtifact).toBeUndefined();
}

function parsed(bytes: Buffer): OhlcvExport {
  const checked = validate.ohlcvExport(JSON.parse(bytes.toString('utf8')));
  if (!checked.ok) throw new Error('invalid export');
  return checked.value;
}

describe('OHLCV_EXPORT through the step harness', () => {
  it('finalizes SUCCEEDED with the export at the deterministic URI', async () => {
    const { outcome, step, uri, bytes, source } = await deliver({});
    expect(outcome).toMatchObject({ kind: 'executed', status: 'SUCCEEDED', tries: 1 });
    expect(step.outputs).toMatchObject({
      gcs_uri: uri,
      execution: { marketData: { provider: 'bundled', candleCount: 104 } },
    });
    expect(parsed(bytes ?? Buffer.alloc(0))).toMatchObject({ stepId: STEP_1W, timeframe: '1w' });
    expect(source.requests).toHaveLength(1);
  });

  it('recovers from an export of this run, step and inputs without fetching (handler.recover vouches)', async () => {
    const run = readyRun();
    const { outcome, step, source, recover, existing } = await deliver({
      run,
      existing: ownExport,
    });
    expect(outcome).toMatchObject({ kind: 'recovered', status: 'SUCCEEDED' });
    expect(recover).toHaveBeenCalledTimes(1);
    expect(source.requests).toEqual([]);
    expect(step.outputs.execution).toMatchObject({
      recoveredFromArtifact: true,
      marketData: {
        provider: 'bundled',
        candleCount: parsed(existing ?? Buffer.alloc(0)).candleCount,
      },
    });
  });

  it('does not hand a corrupt export to handler.recover: it executes again (different bytes: an artifact conflict)', async () => {
    const { outcome, step, source, recover } = await deliver({
      existing: async () => Buffer.from('{"truncated":'),
    });
    expect(recover).not.toHaveBeenCalled();
    expect(source.requests).toHaveLength(1);
    expectConflict(outcome, step);
  });

  it('does not hand an export of another step to handler.recover: it executes again', async () => {
    const { step, source, recover, outcome } = await deliver({
      existing: async (run) => {
        const valid = parsed(await ownExport(run));
        return Buffer.from(JSON.stringify({ ...valid, stepId: 'ohlcv_export:1M' }));
      },
    });
    expect(recover).not.toHaveBeenCalled();
    expect(source.requests).toHaveLength(1);
    expectConflict(outcome, step);
  });

  it('executes again when handler.recover refuses an export of other inputs (another symbol)', async () => {
    const { source, recover, outcome, step } = await deliver({
      existing: async (run) => {
        const valid = parsed(await ownExport(run));
        return Buffer.from(JSON.stringify({ ...valid, symbol: 'ETH-USDT' }));
      },
    });
    expect(recover).toHaveBeenCalledTimes(1);
    await expect(recover.mock.results[0]?.value).resolves.toBeNull();
    expect(source.requests).toHaveLength(1);
    expectConflict(outcome, step);
  });

  it('a retryable MARKET_DATA_UNAVAILABLE from the source is retried in-process, then FAILED with its code', async () => {
    const exchange: CcxtExchangeLike = {
      id: 'binance',
      timeframes: { '1w': '1w' },
      loadMarkets: async () => ({
        'BTC/USDT': { id: 'BTCUSDT', symbol: 'BTC/USDT', base: 'BTC', quote: 'USDT', spot: true },
      }),
      fetchOHLCV: () => Promise.reject(new RateLimitExceeded('binance 429 Too Many Requests')),
    };
    const { outcome, step, source, bytes } = await deliver({
      source: new CcxtCandleSource({ exchange }),
      policy: { handlerRetryBaseDelayMs: 1, handlerRetryMaxDelayMs: 1 },
    });
    expect(source.requests).toHaveLength(3);
    expect(outcome).toMatchObject({
      kind: 'failed',
      status: 'FAILED',
      errorCode: 'MARKET_DATA_UNAVAILABLE',
      tries: 3,
    });
    expect(step.error).toMatchObject({
      code: 'MARKET_DATA_UNAVAILABLE',
      retryable: true,
      details: { exchange: 'binance', errorClass: 'RateLimitExceeded', tries: 3 },
    });
    expect(bytes).toBeNull();
  });

  it('an unknown symbol is FAILED at once: INVALID_STEP_INPUTS is never retried', async () => {
    const { outcome, step, source } = await deliver({ run: readyRun('DOGE-USDT') });
    expect(source.requests).toHaveLength(1);
    expect(outcome).toMatchObject({ kind: 'failed', errorCode: 'INVALID_STEP_INPUTS', tries: 1 });
    expect(step.error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      retryable: false,
      message: "unknown symbol 'DOGE-USDT'; available: BTC-USDT, ETH-USDT",
    });
    expect(step.error?.details).not.toHaveProperty('tries');
  });
});
