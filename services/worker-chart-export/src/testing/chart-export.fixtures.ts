import type { FlowRun, OhlcvCandle, OhlcvExport } from '@tda/contracts';
import { advance, applyPatch, createRun, stepPatch } from '@tda/flow-engine';
import { stepArtifactUri } from '@tda/worker-kit';
import weekly from './btc-usd-1w.candles.json';

export const FIXTURE_NOW = new Date('2022-02-28T06:00:00Z');
export const ARTIFACTS = { bucket: 'tda-artifacts', prefix: 'runs' } as const;
/** Flow 1 (scheduled_month_week_report_v1) step ids of the weekly chain. */
export const OHLCV_STEP_ID = 'ohlcv_export:1w';
export const CHARTS_STEP_ID = 'charts:1w:ctpl_default_v1';

/**
 * 104 real BTC-USD weekly candles, 2020-03-02..2022-02-21: a frozen copy of Yahoo history, not the
 * bundled (Binance) data, so the readings the specs pin never move (see btc-usd-1w.candles.json).
 */
export function weeklyCandles(): OhlcvCandle[] {
  return weekly.candles.map((c) => ({ ...c }));
}

/** A schema-valid OHLCV_EXPORT artifact of `run` carrying `candles`. */
export function ohlcvExport(run: FlowRun, candles: OhlcvCandle[] = weeklyCandles()): OhlcvExport {
  const [first, ...rest] = candles;
  const last = rest[rest.length - 1] ?? first;
  if (first === undefined || last === undefined) throw new Error('no candles');
  const to = new Date(Date.parse(last.openTime) + 7 * 86_400_000)
    .toISOString()
    .replace('.000Z', 'Z');
  return {
    schemaVersion: 1,
    runId: run.runId,
    stepId: OHLCV_STEP_ID,
    symbol: 'BTC-USD',
    timeframe: '1w',
    // A run without scope.asOf: the export is cut at the end of its data.
    asOf: to,
    // The frozen fixture, not a bundled dataset (this worker does not read source).
    source: {
      provider: 'bundled',
      dataset: 'test-fixture/yahoo-BTC-USD_1d',
      marketSymbol: 'BTC-USD',
      sourceTimeframe: '1d',
      volumeUnit: 'quote',
    },
    range: { from: first.openTime, to },
    candles: [first, ...rest],
    candleCount: candles.length,
    incompleteBucketPolicy: 'dropped',
  };
}

/**
 * A real flow-1 run (catalogue createRun) advanced until the weekly charts step is READY: run
 * RUNNING, ohlcv_export:1w SUCCEEDED with its deterministic outputs.gcs_uri.
 */
export function runWithChartsReady(): { run: FlowRun; ohlcvUri: string } {
  let counter = 0;
  let run = createRun({
    flowKey: 'scheduled_month_week_report_v1',
    scope: { symbol: 'BTC-USD' },
    ownerId: 'test-owner',
    trigger: { type: 'SCHEDULER', source: 'test' },
    now: FIXTURE_NOW,
    random: () => ((counter += 1) * 0.137) % 1,
  });
  run = applyPatch(run, advance(run, FIXTURE_NOW).patch);
  const ohlcvUri = stepArtifactUri(
    { ...ARTIFACTS, runId: run.runId, stepId: OHLCV_STEP_ID, timeframe: '1w' },
    '.json',
  );
  run = applyPatch(
    run,
    stepPatch(OHLCV_STEP_ID, {
      status: 'SUCCEEDED',
      attempt: 1,
      finishedAt: FIXTURE_NOW.toISOString(),
      outputs: { gcs_uri: ohlcvUri },
    }),
  );
  run = applyPatch(run, advance(run, FIXTURE_NOW).patch);
  if (run.steps[CHARTS_STEP_ID]?.status !== 'READY')
    throw new Error('charts step did not become READY');
  return { run, ohlcvUri };
}
