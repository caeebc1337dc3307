import type { FlowRun, OhlcvCandle, OhlcvExport, Timeframe } from '@tda/contracts';
import { loadExample } from '@tda/contracts/testing';
import { applyPatch, expandIndicatorRequests, stepPatch } from '@tda/flow-engine';
import { makeFlowRun, makeStep } from '@tda/flow-store/testing';
import { BundledCandleSource, formatTimestamp, nextBucketStart } from '@tda/market-data';
import { stepArtifactUri } from '@tda/worker-kit';

/** The contract examples' run moment: flow 1 on 2022-03-01 06:00 UTC. */
export const AS_OF = '2022-03-01T06:00:00Z';
export const ARTIFACTS = { bucket: 'tda-artifacts', prefix: 'runs' } as const;
const REPORT_CREATED_AT = '2022-03-01T06:05:00.000Z';

export const ohlcvStepId = (timeframe: Timeframe): string => `ohlcv_export:${timeframe}`;
const reportStepId = (timeframe: Timeframe): string => `llm_report:${timeframe}:prompt_test_v1`;

/**
 * The weekly export of the contract examples: 25 complete real BTC-USDT weeks (Binance daily data
 * resampled) and the still-forming week of asOf, marked complete: false.
 */
export function weeklyExport(): OhlcvExport {
  return loadExample('ohlcv_export.1w-marked.example.json') as OhlcvExport;
}

/** `limit` real daily candles of the bundled BTCUSDT_1d dataset up to AS_OF, forming day marked. */
export async function bundledExport(timeframe: Timeframe, limit: number): Promise<OhlcvExport> {
  const asOf = Date.parse(AS_OF);
  const series = await new BundledCandleSource().fetchCandles({
    symbol: 'BTC-USDT',
    timeframe,
    limit,
    asOf,
    incompleteBucketPolicy: 'marked',
  });
  const candles: OhlcvCandle[] = series.candles.map(({ openTime, ...rest }) => ({
    openTime: formatTimestamp(openTime),
    ...rest,
  }));
  const [first, ...more] = candles;
  const last = series.candles.at(-1);
  if (first === undefined || last === undefined) throw new Error('no bundled candles');
  return {
    schemaVersion: 1,
    runId: 'placeholder',
    stepId: ohlcvStepId(timeframe),
    symbol: 'BTC-USDT',
    timeframe,
    asOf: AS_OF,
    source: series.source,
    range: {
      from: first.openTime,
      to: formatTimestamp(nextBucketStart(last.openTime, timeframe)),
    },
    candles: [first, ...more],
    candleCount: candles.length,
    incompleteBucketPolicy: 'marked',
  };
}

export interface IndicatorsRun {
  run: FlowRun;
  stepId: string;
  ohlcvUri: string;
  /** The export re-owned by this run (runId, stepId), as the OHLCV step would have written it. */
  ohlcv: OhlcvExport;
}

/**
 * A run as flow 5 leaves it: an OHLCV step SUCCEEDED, an LLM report that asked for `indicators`,
 * and the INDICATORS_ON_DEMAND step the orchestrator's own expansion (expandIndicatorRequests)
 * inserted, made READY. The step's inputs are therefore exactly what the orchestrator writes.
 */
export function runWithIndicatorsReady(ohlcv: OhlcvExport, indicators: unknown[]): IndicatorsRun {
  const { timeframe } = ohlcv;
  const base = makeFlowRun({
    scope: { symbol: 'BTC-USDT', timeframes: [timeframe], asOf: AS_OF },
    steps: {},
  });
  const ohlcvUri = stepArtifactUri(
    { ...ARTIFACTS, runId: base.runId, timeframe, stepId: ohlcvStepId(timeframe) },
    '.json',
  );
  const run: FlowRun = {
    ...base,
    steps: {
      [ohlcvStepId(timeframe)]: makeStep({
        stepType: 'OHLCV_EXPORT',
        status: 'SUCCEEDED',
        timeframe,
        inputs: {},
        outputs: { gcs_uri: ohlcvUri },
      }),
      [reportStepId(timeframe)]: makeStep({
        stepType: 'LLM_REPORT',
        status: 'SUCCEEDED',
        timeframe,
        dependsOn: [ohlcvStepId(timeframe)],
      }),
    },
  };
  const decision = expandIndicatorRequests(
    run,
    reportStepId(timeframe),
    [{ timeframe, indicators }],
    new Date(REPORT_CREATED_AT),
  );
  if (decision.kind !== 'expand') throw new Error(`not expanded: ${JSON.stringify(decision)}`);
  const stepId = decision.added.find((id) => id.startsWith('indicators_on_demand:'));
  if (stepId === undefined) throw new Error('no indicators step added');
  const expanded = applyPatch(
    applyPatch(run, decision.patch),
    stepPatch(stepId, { status: 'READY', readyAt: REPORT_CREATED_AT }),
  );
  return {
    run: expanded,
    stepId,
    ohlcvUri,
    ohlcv: { ...ohlcv, runId: run.runId, stepId: ohlcvStepId(timeframe) },
  };
}
