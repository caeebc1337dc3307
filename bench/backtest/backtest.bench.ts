import {
  barsPerYear,
  computeSignals,
  countVariants,
  executionAt,
  IndicatorCache,
  runStageA,
  runStageB,
  simulateVariant,
  stageBUnitCount,
  toCandleArrays,
  type BaseScore,
  type CandleArrays,
  type CandleLike,
  type ExecutionGrid,
  type ExecutionParams,
  type GridRequest,
  type StrategySpec,
} from '@tda/backtest';
import {
  runStageBParallel,
  StageBThreadPool,
  type SpawnStageBThread,
} from '@tda/backtest-parallel';
import {
  describeMachine,
  fmt,
  machine,
  markdownTable,
  interleaved,
  seconds,
  type Timings,
  type BenchPart,
  type BenchPartOptions,
} from '../bench-kit';
import { HOUR_MS, loadBundledBtc1h } from '@tda/backtest/testing';
import { referenceBacktest, referenceLoop } from './reference-loop';

/** 2 × 5 × 5 × 4 = 200 risk/execution combinations per base variant (fees and slippage on). */
const EXECUTION: ExecutionGrid = {
  direction: ['long_only', 'long_short'],
  fraction: [1],
  feeBps: [10],
  slippageBps: [5],
  stopLossPct: [0, 1, 2, 3, 5],
  takeProfitPct: [0, 2, 4, 6, 8],
  trailingStopPct: [0, 1.5, 3, 5],
};

const SMOKE_EXECUTION: ExecutionGrid = {
  ...EXECUTION,
  stopLossPct: [0, 2],
  takeProfitPct: [0, 4],
  trailingStopPct: [0, 3],
};

const range = (from: number, count: number, step: number) =>
  Array.from({ length: count }, (_, i) => from + i * step);

/** EMA cross grids: every fast below every slow, so bases = fasts × slows. */
function grid(fasts: number, slows: number, execution: ExecutionGrid): GridRequest {
  const bases = fasts * slows;
  return {
    strategy: {
      kind: 'ma_cross',
      ma: 'ema',
      params: { fast: range(3, fasts, 1), slow: range(30, slows, 5) },
    },
    execution,
    top_k: 50,
    preselect: bases,
    top_trades_n: 0,
  };
}

interface Size {
  request: GridRequest;
  reps: number;
  /** Variants the reference loop runs (it is ~100× slower): the first ones of stage B. */
  referenceSample: number;
}

function sizes(smoke: boolean): Size[] {
  if (smoke) {
    return [
      { request: grid(1, 2, SMOKE_EXECUTION), reps: 1, referenceSample: 16 },
      { request: grid(2, 3, SMOKE_EXECUTION), reps: 1, referenceSample: 16 },
    ];
  }
  return [
    { request: grid(1, 5, EXECUTION), reps: 5, referenceSample: 200 },
    { request: grid(5, 10, EXECUTION), reps: 5, referenceSample: 200 },
    { request: grid(20, 25, EXECUTION), reps: 3, referenceSample: 200 },
  ];
}

export interface BacktestBenchRow {
  variants: number;
  bars: number;
  /** Best of the runs (the machine is shared: the best is the least disturbed). */
  engineSeconds: number;
  engineMedianSeconds: number;
  engineVariantsPerSec: number;
  engineVariantBarsPerSecPerCore: number;
  referenceVariants: number;
  /** The reference loop alone, on the engine's signals. */
  referenceLoopVariantBarsPerSec: number;
  /** The whole simple backtest: indicators per variant (trading-signals), then the loop. */
  referenceVariantBarsPerSec: number;
  engineOverReferenceLoop: number;
  engineOverReference: number;
  twoThreadsSeconds: number;
  twoThreadsMedianSeconds: number;
  twoThreadsVariantBarsPerSec: number;
  twoThreadsSpeedup: number;
  /** Starting the 2 threads (not in twoThreadsSeconds: a kept pool pays it once). */
  threadStartSeconds: number;
}

export interface BacktestBenchOptions extends BenchPartOptions {
  /** Thread entry for the 2-thread runs (default: the pool's). */
  spawn?: SpawnStageBThread;
}

/** Engine (stage B, 1 core), reference loops and 2 threads on one grid. */
async function measure(
  candles: CandleArrays,
  objects: CandleLike[],
  size: Size,
  options: BacktestBenchOptions,
): Promise<BacktestBenchRow> {
  const { request, reps } = size;
  const cache = new IndicatorCache(candles);
  const shortlist = runStageA(candles, request, { cache }).shortlist;
  const variants = stageBUnitCount(request, shortlist.length);
  const spawn = options.spawn === undefined ? {} : { spawn: options.spawn };
  const pool = new StageBThreadPool({ threads: 2, ...spawn });
  let times: { serial: Timings; parallel: Timings; startSeconds: number };
  try {
    const startSeconds = await seconds(() => pool.warm());
    // Interleaved, so a burst of load from elsewhere hits both sides alike.
    const paired = await interleaved(reps, [
      () => runStageB(candles, request, shortlist, { cache }),
      () => runStageBParallel(candles, request, shortlist, { pool }),
    ]);
    times = { serial: paired[0] as Timings, parallel: paired[1] as Timings, startSeconds };
  } finally {
    await pool.close();
  }
  const ref = referenceRates(candles, objects, request, shortlist, size.referenceSample);
  const work = variants * candles.length;
  const engineSeconds = times.serial.best;
  const twoThreadsSeconds = times.parallel.best;
  return {
    variants,
    bars: candles.length,
    engineSeconds,
    engineMedianSeconds: times.serial.median,
    engineVariantsPerSec: variants / engineSeconds,
    engineVariantBarsPerSecPerCore: work / engineSeconds,
    referenceVariants: ref.variants,
    referenceLoopVariantBarsPerSec: ref.loopRate,
    referenceVariantBarsPerSec: ref.fullRate,
    engineOverReferenceLoop: work / engineSeconds / ref.loopRate,
    engineOverReference: work / engineSeconds / ref.fullRate,
    twoThreadsSeconds,
    twoThreadsMedianSeconds: times.parallel.median,
    twoThreadsVariantBarsPerSec: work / twoThreadsSeconds,
    twoThreadsSpeedup: engineSeconds / twoThreadsSeconds,
    threadStartSeconds: times.startSeconds,
  };
}

interface Unit {
  spec: StrategySpec;
  signals: Int8Array;
  plain: number[];
  execution: ExecutionParams;
}

/**
 * The reference over the first `sample` units of stage B: the loop alone (the engine's signals)
 * and the whole simple backtest (its own indicators per variant). Checks on the way that it
 * agrees with the engine on every return (the ratios compare the same work).
 */
function referenceRates(
  candles: CandleArrays,
  objects: CandleLike[],
  request: GridRequest,
  shortlist: readonly BaseScore[],
  sample: number,
): { variants: number; loopRate: number; fullRate: number } {
  const cache = new IndicatorCache(candles);
  const perYear = barsPerYear(candles);
  const perBase = countVariants(request).execution;
  const count = Math.min(sample, shortlist.length * perBase);
  const units: Unit[] = Array.from({ length: count }, (_, u) => {
    const spec = (shortlist[Math.floor(u / perBase)] as BaseScore).spec;
    const signals = computeSignals(cache, spec);
    const execution = executionAt(request.execution, u % perBase);
    return { spec, signals, plain: Array.from(signals), execution };
  });
  for (const u of units.slice(0, 3)) referenceBacktest(objects, u.spec, u.execution, perYear);
  const loop = timed(() => units.map((u) => referenceLoop(objects, u.plain, u.execution, perYear)));
  const full = timed(() =>
    units.map((u) => referenceBacktest(objects, u.spec, u.execution, perYear)),
  );
  units.forEach((u, i) => {
    const engine = simulateVariant(candles, u.signals, u.execution).metrics.total_return_pct;
    for (const ref of [loop.value[i], full.value[i]]) {
      const r = ref?.totalReturnPct ?? Number.NaN;
      if (!(Math.abs(engine - r) <= 1e-6 * Math.max(1, Math.abs(r)))) {
        throw new Error(`bench: engine and reference disagree (${engine} vs ${r})`);
      }
    }
  });
  const work = count * candles.length;
  return { variants: count, loopRate: work / loop.seconds, fullRate: work / full.seconds };
}

function timed<T>(run: () => T): { value: T; seconds: number } {
  const start = process.hrtime.bigint();
  const value = run();
  return { value, seconds: Number(process.hrtime.bigint() - start) / 1e9 };
}

const HEADERS = [
  'variants',
  'bars',
  'engine variants/s',
  'engine variant-bars/s/core',
  'reference variant-bars/s',
  'engine / reference',
  'reference loop only',
  'engine / loop only',
  '2 threads variant-bars/s',
  '2-thread speedup',
  'thread start',
];

function row(r: BacktestBenchRow): string[] {
  return [
    r.variants.toLocaleString('en-US'),
    String(r.bars),
    fmt(r.engineVariantsPerSec),
    fmt(r.engineVariantBarsPerSecPerCore),
    fmt(r.referenceVariantBarsPerSec, 2),
    `${r.engineOverReference.toFixed(1)}×`,
    fmt(r.referenceLoopVariantBarsPerSec, 2),
    `${r.engineOverReferenceLoop.toFixed(1)}×`,
    fmt(r.twoThreadsVariantBarsPerSec),
    `${r.twoThreadsSpeedup.toFixed(2)}×`,
    `${r.threadStartSeconds.toFixed(2)} s`,
  ];
}

/** `npm run bench -- backtest`: the engine beside the reference loop and on 2 threads. */
export async function runBacktestBench(options: BacktestBenchOptions): Promise<BenchPart> {
  const objects = loadBundledBtc1h().slice(0, options.smoke ? 300 : undefined);
  const candles = toCandleArrays(objects, HOUR_MS);
  const rows: BacktestBenchRow[] = [];
  for (const size of sizes(options.smoke))
    rows.push(await measure(candles, objects, size, options));
  const host = machine();
  const markdown = [
    `### backtest: EMA cross × stops/targets/trailing, fees + slippage, BTCUSDT 1h (bundled)`,
    '',
    describeMachine(host),
    '',
    markdownTable(HEADERS, rows.map(row)),
    '',
    'Engine = stage B (`runStageB`: signals per base from the shared indicator cache, kernel with',
    'fees, stops, drawdown and Sharpe, running top-K), 1 core. Reference =',
    '`bench/backtest/reference-loop.ts` on the first stage-B variants (the simple backtest of',
    '`simulate.reference.spec.ts`: trading-signals indicators per variant, then the plain loop);',
    '"loop only" = the same loop on the engine\'s signals. 2 threads = `runStageBParallel` on a',
    'kept pool of 2 worker threads (starting the threads, timed apart, is paid once per pool).',
    'Engine and 2-thread runs alternate; the best of the runs is shown (the machine is shared;',
    'medians in the JSON). Targets: ≥ 100 M variant-bars/s/core, ≥ 20× the reference, ≥ 1.7× on',
    '2 threads.',
  ].join('\n');
  return { part: 'backtest', markdown, data: { machine: host, smoke: options.smoke, rows } };
}
