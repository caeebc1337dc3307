import type {
  IndicatorName,
  IndicatorValues,
  IndicatorsOnDemandInputs,
  OhlcvCandle,
  OhlcvExport,
} from '@tda/contracts';
import { checkIndicatorRequests } from '@tda/flow-engine';
import { formatTimestamp, nextBucketStart } from '@tda/market-data';
import { INDICATORS_ON_DEMAND_STEP } from '@tda/step-types';
import {
  StepError,
  StepInputError,
  type ExistingArtifact,
  type StepContext,
  type StepHandler,
  type StepResult,
} from '@tda/worker-kit';
import { indicatorResult, type IndicatorRequestItem } from './indicator-values';

/** Version of the artifact format (indicator_values.schema.json schemaVersion). */
export const INDICATOR_VALUES_SCHEMA_VERSION = 1;
/** Points per tail unless configured (TDA_INDICATORS_TAIL_POINTS). */
export const DEFAULT_TAIL_POINTS = 30;

type Context = StepContext<typeof INDICATORS_ON_DEMAND_STEP>;

export interface IndicatorsOnDemandHandlerOptions {
  /** The most points per indicator tail (1..50). */
  tailPoints?: number;
}

/**
 * The requested indicators checked against the catalogue again (the orchestrator did, but the
 * inputs are a document anyone with write access could edit) and the timeframe against the step's.
 */
export function requestedIndicators(
  inputs: IndicatorsOnDemandInputs,
  stepTimeframe: string | undefined,
): IndicatorRequestItem[] {
  if (stepTimeframe !== undefined && inputs.timeframe !== stepTimeframe) {
    throw new StepInputError(
      `inputs.timeframe must equal the step's timeframe ${stepTimeframe} (got ${inputs.timeframe})`,
      { field: 'timeframe' },
    );
  }
  const checked = checkIndicatorRequests(
    [{ timeframe: inputs.timeframe, indicators: inputs.indicators }],
    [inputs.timeframe],
  );
  if (!checked.ok) {
    throw new StepInputError(
      `inputs.${checked.message.replace(/^(indicator requests|requests\[0\])\.?/, '')}`,
      { field: 'indicators', ...checked.details },
    );
  }
  return (checked.requests[0]?.indicators ?? []).map((i) => ({
    // checkIndicatorRequests only returns catalogue names, the schema's enum.
    name: i.name as IndicatorName,
    params: i.params,
  }));
}

/**
 * The candles the indicators use: complete ones that ended by the cut (the run's asOf, or the
 * export's when earlier). The export's still-forming candle (complete: false) is never used.
 */
export function completeCandles(ohlcv: OhlcvExport, cut: number): OhlcvCandle[] {
  return ohlcv.candles.filter(
    (c) => c.complete !== false && nextBucketStart(Date.parse(c.openTime), ohlcv.timeframe) <= cut,
  );
}

/**
 * INDICATORS_ON_DEMAND (flow 5): computes the indicators an LLM step asked for on the run's OHLCV
 * export of the step's timeframe (ctx.upstream('ohlcv'), validated by the harness) and returns
 * the `indicator_values` artifact: per indicator its value at the last complete candle at or
 * before asOf and a short tail. An indicator whose warm-up the window cannot cover is
 * `insufficient_data` with a reason while the others are computed (the step still SUCCEEDS: the
 * follow-up LLM step learns what could not be computed); an export without any complete candle
 * up to asOf fails MARKET_DATA_UNAVAILABLE.
 */
export class IndicatorsOnDemandHandler implements StepHandler<typeof INDICATORS_ON_DEMAND_STEP> {
  readonly descriptor = INDICATORS_ON_DEMAND_STEP;
  readonly tailPoints: number;

  constructor(options: IndicatorsOnDemandHandlerOptions = {}) {
    this.tailPoints = options.tailPoints ?? DEFAULT_TAIL_POINTS;
  }

  async execute(context: Context): Promise<StepResult> {
    const { inputs, run, step, signal } = context;
    const items = requestedIndicators(inputs, step.timeframe);
    const ohlcv = await context.upstream('ohlcv');
    const asOf = run.scope.asOf ?? ohlcv.artifact.asOf;
    const candles = completeCandles(
      ohlcv.artifact,
      Math.min(Date.parse(asOf), Date.parse(ohlcv.artifact.asOf)),
    );
    const first = candles[0];
    const last = candles.at(-1);
    if (first === undefined || last === undefined) {
      throw new StepError(
        'MARKET_DATA_UNAVAILABLE',
        `the OHLCV export ${inputs.ohlcvStepId} has no complete candle at or before asOf ${asOf}`,
        { details: { ohlcvStepId: inputs.ohlcvStepId, asOf }, retryable: false },
      );
    }
    context.heartbeat({ stage: 'compute', totalUnits: items.length });
    const indicators = items.map((item) => indicatorResult(item, candles, this.tailPoints));
    signal.throwIfAborted();
    const artifact: IndicatorValues = {
      schemaVersion: INDICATOR_VALUES_SCHEMA_VERSION,
      runId: run.runId,
      stepId: context.stepId,
      symbol: ohlcv.artifact.symbol,
      timeframe: ohlcv.artifact.timeframe,
      asOf,
      ohlcvStepId: inputs.ohlcvStepId,
      ohlcvGcsUri: ohlcv.uri,
      window: {
        from: first.openTime,
        lastOpenTime: last.openTime,
        to: formatTimestamp(nextBucketStart(Date.parse(last.openTime), ohlcv.artifact.timeframe)),
        candles: candles.length,
      },
      tailLength: this.tailPoints,
      indicators: indicators as IndicatorValues['indicators'],
    };
    const uri = context.artifactUri('.json');
    return {
      artifacts: [
        { uri, data: serializeIndicatorValues(artifact), contentType: 'application/json' },
      ],
      primaryUri: uri,
      execution: { indicators: executionSummary(artifact) },
    };
  }

  /**
   * Split-brain recovery: finalize from an existing artifact only when it holds these very
   * indicators with this worker's tail length; otherwise execute again.
   */
  recover(
    existing: ExistingArtifact<IndicatorValues>,
    context: Context,
  ): Promise<StepResult | null> {
    const items = requestedIndicators(context.inputs, context.step.timeframe);
    const { artifact } = existing;
    const wanted = JSON.stringify(items.map((i) => [i.name, sortedParams(i.params)]));
    const found = JSON.stringify(artifact.indicators.map((i) => [i.name, sortedParams(i.params)]));
    const same = wanted === found && artifact.tailLength === this.tailPoints;
    return Promise.resolve(
      same
        ? {
            artifacts: [],
            primaryUri: existing.uri,
            execution: { indicators: executionSummary(artifact) },
          }
        : null,
    );
  }
}

function sortedParams(params: Record<string, number>): [string, number][] {
  return Object.entries(params).sort(([a], [b]) => (a < b ? -1 : 1));
}

/** Compact JSON (one line): the artifact is quoted in an LLM prompt as it is. */
export function serializeIndicatorValues(artifact: IndicatorValues): Buffer {
  return Buffer.from(`${JSON.stringify(artifact)}\n`, 'utf8');
}

/** Labels and counts for outputs.execution (never the values). */
function executionSummary(artifact: IndicatorValues): Record<string, unknown> {
  const insufficient = artifact.indicators.filter((i) => i.status !== 'ok').map((i) => i.label);
  return {
    requested: artifact.indicators.length,
    computed: artifact.indicators.length - insufficient.length,
    ...(insufficient.length === 0 ? {} : { insufficient }),
    candles: artifact.window.candles,
    lastOpenTime: artifact.window.lastOpenTime,
  };
}
