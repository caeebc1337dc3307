import { InMemoryArtifactStore } from '@tda/artifacts';
import { bollingerSeries, rsiSeries } from '@tda/charts';
import {
  validate,
  type ErrorInfo,
  type FlowRun,
  type IndicatorResult,
  type IndicatorValues,
  type OhlcvExport,
} from '@tda/contracts';
import { applyPatch, INDICATOR_NAMES, stepPatch } from '@tda/flow-engine';
import { indicatorValuesProblem, INDICATORS_ON_DEMAND_STEP } from '@tda/step-types';
import { StepError, type StepResult } from '@tda/worker-kit';
import { handlerContext } from '@tda/worker-kit/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { IndicatorsOnDemandHandler } from './indicators.handler';
import {
  ARTIFACTS,
  bundledExport,
  runWithIndicatorsReady,
  weeklyExport,
  type IndicatorsRun,
} from './testing';

const NOW = new Date('2022-03-01T06:10:00Z');

const ALL_TEN = [
  { name: 'RSI' },
  { name: 'MACD' },
  { name: 'ATR', params: { period: 10 } },
  { name: 'BOLLINGER', params: { stdDev: 2.5 } },
  { name: 'EMA', params: { period: 10 } },
  { name: 'SMA', params: { period: 50 } },
  { name: 'STOCHASTIC' },
  { name: 'ADX' },
];

async function storeWith(setup: IndicatorsRun, ohlcv: unknown = setup.ohlcv) {
  const store = new InMemoryArtifactStore();
  if (ohlcv !== null) {
    await store.put(setup.ohlcvUri, Buffer.from(JSON.stringify(ohlcv)), {
      contentType: 'application/json',
    });
  }
  return store;
}

async function built(setup: IndicatorsRun, run: FlowRun = setup.run, ohlcv?: unknown) {
  return handlerContext(INDICATORS_ON_DEMAND_STEP, {
    run,
    stepId: setup.stepId,
    artifacts: await storeWith(setup, ohlcv),
    ...ARTIFACTS,
    now: () => NOW,
  });
}

async function execute(
  setup: IndicatorsRun,
  handler = new IndicatorsOnDemandHandler(),
  run?: FlowRun,
): Promise<{ result: StepResult; artifact: IndicatorValues; bytes: Buffer }> {
  const b = await built(setup, run);
  if (!b.ok) throw new Error(`inputs refused: ${b.error.message}`);
  const result = await handler.execute(b.context);
  const primary = result.artifacts.find((a) => a.uri === result.primaryUri);
  if (primary === undefined) throw new Error('no primary artifact');
  const checked = validate.indicatorValues(JSON.parse(primary.data.toString('utf8')));
  if (!checked.ok) throw new Error(JSON.stringify(checked.issues));
  expect(indicatorValuesProblem(checked.value)).toBeUndefined();
  return { result, artifact: checked.value, bytes: primary.data };
}

async function failure(setup: IndicatorsRun, run: FlowRun): Promise<StepError> {
  const b = await built(setup, run);
  if (!b.ok) throw new Error(`inputs refused by the schema: ${b.error.message}`);
  const error: unknown = await new IndicatorsOnDemandHandler().execute(b.context).catch((e) => e);
  expect(error).toBeInstanceOf(StepError);
  return error as StepError;
}

function withInputs(setup: IndicatorsRun, inputs: Record<string, unknown>): FlowRun {
  return applyPatch(setup.run, stepPatch(setup.stepId, { inputs }));
}

function byName(artifact: IndicatorValues, name: string): IndicatorResult {
  const found = artifact.indicators.find((i) => i.name === name);
  if (found === undefined) throw new Error(`no ${name}`);
  return found;
}

const relClose = (a: number | undefined, b: number | null | undefined): void =>
  expect(Math.abs((a ?? Number.NaN) - (b ?? Number.NaN))).toBeLessThanOrEqual(
    1e-7 * Math.abs(b ?? 1),
  );

describe('IndicatorsOnDemandHandler on the weekly export (forming week marked)', () => {
  const ohlcv = weeklyExport();
  const complete = ohlcv.candles.filter((c) => c.complete !== false);
  let artifact: IndicatorValues;
  let setup: IndicatorsRun;

  beforeAll(async () => {
    setup = runWithIndicatorsReady(ohlcv, [...ALL_TEN, { name: 'OBV' }].slice(0, 8));
    ({ artifact } = await execute(setup));
  });

  it('uses the complete weeks only: the forming week of asOf is left out', () => {
    expect(complete).toHaveLength(25);
    expect(artifact.window).toEqual({
      from: '2021-09-06T00:00:00Z',
      lastOpenTime: '2022-02-21T00:00:00Z',
      to: '2022-02-28T00:00:00Z',
      candles: 25,
    });
    expect(artifact).toMatchObject({
      runId: setup.run.runId,
      stepId: setup.stepId,
      symbol: 'BTC-USDT',
      timeframe: '1w',
      asOf: '2022-03-01T06:00:00Z',
      ohlcvStepId: 'ohlcv_export:1w',
      ohlcvGcsUri: setup.ohlcvUri,
      tailLength: 30,
    });
  });

  it('computes each indicator on those closes (RSI, Bollinger) and not on the forming one', () => {
    const closes = complete.map((c) => c.close);
    const rsi = byName(artifact, 'RSI');
    expect(rsi).toMatchObject({ label: 'RSI(14)', status: 'ok', requiredCandles: 15 });
    relClose(rsi.latest?.values['value'], rsiSeries(closes, 14).at(-1));
    const withForming = rsiSeries([...closes, ohlcv.candles.at(-1)?.close ?? 0], 14).at(-1);
    expect(Math.abs((rsi.latest?.values['value'] ?? 0) - (withForming ?? 0))).toBeGreaterThan(0.1);
    // 25 candles, 15 to warm up: 11 points.
    expect(rsi.tail).toHaveLength(11);
    expect(rsi.latest).toEqual(rsi.tail.at(-1));
    const bands = byName(artifact, 'BOLLINGER');
    expect(bands).toMatchObject({
      label: 'BOLLINGER(20,2.5)',
      fields: ['upper', 'middle', 'lower'],
    });
    const expected = bollingerSeries(closes, 20, 2.5).at(-1);
    relClose(bands.latest?.values['upper'], expected?.upper);
    relClose(bands.latest?.values['lower'], expected?.lower);
  });

  it('marks what 25 weeks cannot warm up insufficient_data, and computes the rest', () => {
    const statuses = Object.fromEntries(artifact.indicators.map((i) => [i.label, i.status]));
    expect(statuses).toEqual({
      'RSI(14)': 'ok',
      'MACD(12,26,9)': 'insufficient_data',
      'ATR(10)': 'ok',
      'BOLLINGER(20,2.5)': 'ok',
      'EMA(10)': 'ok',
      'SMA(50)': 'insufficient_data',
      'STOCHASTIC(14,3)': 'ok',
      'ADX(14)': 'insufficient_data',
    });
    expect(byName(artifact, 'MACD')).toMatchObject({
      requiredCandles: 34,
      latest: null,
      tail: [],
      reason: 'needs 34 complete candles, the window has 25',
    });
  });
});

describe('IndicatorsOnDemandHandler on 1000 real daily candles', () => {
  let ohlcv: OhlcvExport;
  beforeAll(async () => {
    ohlcv = await bundledExport('1d', 1000);
  });

  it('eight indicators fit well under 64 KB, every value at the last complete day', async () => {
    const eight = [
      ...ALL_TEN.slice(0, 5),
      { name: 'STOCHASTIC' },
      { name: 'ADX' },
      { name: 'VWAP' },
    ];
    const { artifact, bytes } = await execute(runWithIndicatorsReady(ohlcv, eight));
    expect(bytes.length).toBeLessThan(32 * 1024);
    expect(artifact.window).toMatchObject({ lastOpenTime: '2022-02-28T00:00:00Z', candles: 1000 });
    for (const result of artifact.indicators) {
      expect(result.status, result.label).toBe('ok');
      expect(result.tail, result.label).toHaveLength(30);
      expect(result.latest?.openTime, result.label).toBe('2022-02-28T00:00:00Z');
    }
  });

  it('SMA is the mean of the last closes and VWAP is anchored at window.from', async () => {
    const setup = runWithIndicatorsReady(ohlcv, [{ name: 'SMA' }, { name: 'VWAP' }]);
    const { artifact } = await execute(setup);
    const complete = ohlcv.candles.filter((c) => c.complete !== false);
    const last50 = complete.slice(-50).map((c) => c.close);
    relClose(byName(artifact, 'SMA').latest?.values['value'], last50.reduce((a, b) => a + b) / 50);
    const sums = complete.reduce(
      (s, c) => ({ pv: s.pv + ((c.high + c.low + c.close) / 3) * c.volume, v: s.v + c.volume }),
      { pv: 0, v: 0 },
    );
    relClose(byName(artifact, 'VWAP').latest?.values['value'], sums.pv / sums.v);
    expect(artifact.window.from).toBe(complete[0]?.openTime);
  });

  it('cuts at the run’s asOf when it is earlier than the export’s', async () => {
    const setup = runWithIndicatorsReady(ohlcv, [{ name: 'RSI' }]);
    const run = { ...setup.run, scope: { ...setup.run.scope, asOf: '2022-02-10T12:00:00Z' } };
    const { artifact } = await execute(setup, undefined, run);
    expect(artifact.asOf).toBe('2022-02-10T12:00:00Z');
    expect(artifact.window.lastOpenTime).toBe('2022-02-09T00:00:00Z');
    expect(byName(artifact, 'RSI').latest?.openTime).toBe('2022-02-09T00:00:00Z');
  });
});

describe('IndicatorsOnDemandHandler refusals and recovery', () => {
  const setup = runWithIndicatorsReady(weeklyExport(), [{ name: 'RSI' }, { name: 'VWAP' }]);
  const inputs = setup.run.steps[setup.stepId]?.inputs ?? {};

  it('the inputs are what the orchestrator writes, and valid against the inputs contract', () => {
    expect(inputs).toEqual({
      timeframe: '1w',
      indicators: [
        { name: 'RSI', params: { period: 14 } },
        { name: 'VWAP', params: {} },
      ],
      ohlcvStepId: 'ohlcv_export:1w',
    });
    expect(validate.flowRun(setup.run).ok).toBe(true);
  });

  it('the inputs contract names exactly the catalogue', () => {
    const refused = validate.indicatorsOnDemandInputs({
      ...inputs,
      indicators: [{ name: 'X', params: {} }],
    });
    expect(refused.ok).toBe(false);
    for (const name of INDICATOR_NAMES) {
      const one = { ...inputs, indicators: [{ name, params: {} }] };
      expect(validate.indicatorsOnDemandInputs(one).ok, name).toBe(true);
    }
  });

  it('an unknown indicator is refused by the schema before the handler runs', async () => {
    const b = await built(
      setup,
      withInputs(setup, { ...inputs, indicators: [{ name: 'FOO', params: {} }] }),
    );
    expect(b.ok).toBe(false);
    const error = (b as { error: ErrorInfo }).error;
    expect(error.code).toBe('INVALID_STEP_INPUTS');
    expect(JSON.stringify(error.details)).toContain('/indicators/0/name');
  });

  it('parameters outside the catalogue are the handler’s StepInputError', async () => {
    const macd = { name: 'MACD', params: { fast: 30, slow: 26, signal: 9 } };
    const error = await failure(setup, withInputs(setup, { ...inputs, indicators: [macd] }));
    expect(error).toMatchObject({ code: 'INVALID_STEP_INPUTS', retryable: false });
    expect(error.message).toBe('inputs.indicators[0]: MACD: fast must be below slow');
    const rsi = { name: 'RSI', params: { period: 1000 } };
    const big = await failure(setup, withInputs(setup, { ...inputs, indicators: [rsi] }));
    expect(big.message).toBe('inputs.indicators[0]: RSI.period must be an integer in 2..100');
  });

  it('a timeframe other than the step’s is refused', async () => {
    const error = await failure(setup, withInputs(setup, { ...inputs, timeframe: '1d' }));
    expect(error.message).toMatch(/inputs.timeframe must equal the step's timeframe 1w/);
  });

  it('an export without a complete candle by asOf fails MARKET_DATA_UNAVAILABLE', async () => {
    const forming = setup.ohlcv.candles.at(-1);
    if (forming === undefined) throw new Error('no candles');
    const onlyForming = { ...setup.ohlcv, candles: [forming], candleCount: 1 };
    const b = await built(setup, setup.run, onlyForming);
    if (!b.ok) throw new Error(b.error.message);
    const error: unknown = await new IndicatorsOnDemandHandler().execute(b.context).catch((e) => e);
    expect(error).toMatchObject({ code: 'MARKET_DATA_UNAVAILABLE', retryable: false });
  });

  it('is deterministic, and recovers only an artifact of the same request and tail length', async () => {
    const first = await execute(setup);
    const second = await execute(setup);
    expect(second.bytes.equals(first.bytes)).toBe(true);
    const existing = { uri: first.result.primaryUri, artifact: first.artifact, bytes: first.bytes };
    const b = await built(setup);
    if (!b.ok) throw new Error(b.error.message);
    await expect(
      new IndicatorsOnDemandHandler().recover(existing, b.context),
    ).resolves.toMatchObject({ primaryUri: first.result.primaryUri, artifacts: [] });
    const shorter = new IndicatorsOnDemandHandler({ tailPoints: 5 });
    await expect(shorter.recover(existing, b.context)).resolves.toBeNull();
  });
});
