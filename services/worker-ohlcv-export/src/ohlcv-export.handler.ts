import type { OhlcvCandle, OhlcvExport, OhlcvSource, Timeframe } from '@tda/contracts';
import { DEFAULT_LOOKBACK } from '@tda/flow-engine';
import {
  findCandleProblems,
  formatTimestamp,
  nextBucketStart,
  parseAsOf,
  type Candle,
  type CandleSeries,
  type CandleSource,
  type IncompleteBucketPolicy,
} from '@tda/market-data';
import { OHLCV_EXPORT_STEP } from '@tda/step-types';
import {
  StepError,
  StepInputError,
  type ExistingArtifact,
  type StepContext,
  type StepHandler,
  type StepResult,
} from '@tda/worker-kit';

/** Version of the artifact format (ohlcv_export.schema.json schemaVersion). */
export const OHLCV_EXPORT_SCHEMA_VERSION = 1;

export interface OhlcvExportHandlerOptions {
  candles: CandleSource;
  /**
   * What to do with the still-forming last bucket. Default 'marked': the newest price action
   * stays visible to charts and reports, flagged `complete: false`.
   */
  incompleteBucketPolicy?: IncompleteBucketPolicy;
}

type Context = StepContext<typeof OHLCV_EXPORT_STEP>;

/** What the export is of: the inputs with their defaults filled in, and the run's asOf. */
export interface OhlcvRequest {
  symbol: string;
  timeframe: Timeframe;
  lookback: number;
  /** run.scope.asOf (epoch ms): the data is cut there. Absent on runs created before asOf. */
  asOf?: number;
}

/**
 * OHLCV_EXPORT: reads candles from the configured CandleSource and returns the `ohlcv_export`
 * artifact. The bytes depend only on the run, the step and the source data (no wall-clock time,
 * fixed key order), so a re-execution writes identical bytes under the same name. Inputs are
 * validated by the harness (ohlcv_export_inputs); absent ones default to the run's symbol, the
 * step's timeframe and the timeframe's lookback. The data is cut at the run's `scope.asOf` (every
 * timeframe of a run ends at the same moment); a run without one gets the newest data.
 */
export class OhlcvExportHandler implements StepHandler<typeof OHLCV_EXPORT_STEP> {
  readonly descriptor = OHLCV_EXPORT_STEP;
  private readonly candles: CandleSource;
  private readonly policy: IncompleteBucketPolicy;

  constructor(options: OhlcvExportHandlerOptions) {
    this.candles = options.candles;
    this.policy = options.incompleteBucketPolicy ?? 'marked';
  }

  async execute(context: Context): Promise<StepResult> {
    const { run, stepId, signal } = context;
    const request = requestOf(context);
    context.heartbeat({ stage: 'fetch_candles' });
    const series = await this.fetch(request, signal);
    signal.throwIfAborted();
    const artifact = buildArtifact(run.runId, stepId, request, series);
    const uri = context.artifactUri('.json');
    return {
      artifacts: [{ uri, data: serialize(artifact), contentType: 'application/json' }],
      primaryUri: uri,
      execution: { marketData: executionSummary(artifact) },
    };
  }

  /**
   * Split-brain recovery: the harness checked the artifact is a valid export of this run and
   * step; vouch for it only if it is of these very inputs (otherwise null: execute again).
   */
  recover(existing: ExistingArtifact<OhlcvExport>, context: Context): Promise<StepResult | null> {
    const request = requestOf(context);
    const { artifact } = existing;
    const same =
      artifact.symbol === request.symbol &&
      artifact.timeframe === request.timeframe &&
      artifact.candleCount <= request.lookback &&
      (request.asOf === undefined || Date.parse(artifact.asOf) === request.asOf);
    return Promise.resolve(
      same
        ? {
            artifacts: [],
            primaryUri: existing.uri,
            execution: { marketData: executionSummary(artifact) },
          }
        : null,
    );
  }

  private async fetch(request: OhlcvRequest, signal: AbortSignal): Promise<CandleSeries> {
    const { symbol, timeframe, lookback, asOf } = request;
    const series = await this.candles.fetchCandles({
      symbol,
      timeframe,
      limit: lookback,
      ...(asOf === undefined ? {} : { asOf }),
      incompleteBucketPolicy: this.policy,
      signal,
    });
    const source = describeSource(series.source);
    if (series.candles.length === 0) {
      const cut = asOf === undefined ? '' : ` up to asOf ${formatTimestamp(asOf)}`;
      throw new StepError(
        'MARKET_DATA_UNAVAILABLE',
        `no ${timeframe} candles for ${symbol} from ${source}${cut}`,
        {
          details: {
            symbol,
            timeframe,
            source: series.source,
            ...(asOf === undefined ? {} : { asOf: formatTimestamp(asOf) }),
          },
          retryable: false,
        },
      );
    }
    const problems = findCandleProblems(series.candles);
    if (problems.length > 0) {
      throw new StepError(
        'MARKET_DATA_UNAVAILABLE',
        `${source} returned inconsistent candles for ${symbol} ${timeframe}`,
        {
          details: {
            symbol,
            timeframe,
            problems: problems.slice(0, 5),
            problemCount: problems.length,
          },
          retryable: false,
        },
      );
    }
    return series;
  }
}

/** The inputs with defaults, and the one rule the schema cannot state (inputs vs step timeframe). */
export function requestOf(context: Pick<Context, 'inputs' | 'run' | 'step'>): OhlcvRequest {
  const { inputs, step } = context;
  if (
    inputs.timeframe !== undefined &&
    step.timeframe !== undefined &&
    inputs.timeframe !== step.timeframe
  ) {
    throw new StepInputError(
      `inputs.timeframe must equal the step's timeframe ${step.timeframe} (got ${inputs.timeframe})`,
      { field: 'timeframe' },
    );
  }
  const timeframe = inputs.timeframe ?? step.timeframe;
  if (timeframe === undefined) {
    throw new StepInputError('inputs.timeframe is missing (neither inputs nor step have one)', {
      field: 'timeframe',
    });
  }
  const { asOf } = context.run.scope;
  return {
    symbol: inputs.symbol ?? context.run.scope.symbol,
    timeframe,
    lookback: inputs.lookback ?? DEFAULT_LOOKBACK[timeframe],
    ...(asOf === undefined ? {} : { asOf: parseAsOf(asOf) }),
  };
}

/** The artifact with a fixed key order (schema order), so the bytes are reproducible. */
function buildArtifact(
  runId: string,
  stepId: string,
  request: OhlcvRequest,
  series: CandleSeries,
): OhlcvExport {
  const [first, ...rest] = series.candles.map(toOhlcvCandle);
  const last = series.candles[series.candles.length - 1];
  if (first === undefined || last === undefined) {
    throw new StepError('INTERNAL_ERROR', 'no candles to export', {
      details: { stepId },
      retryable: false,
    });
  }
  const to = formatTimestamp(nextBucketStart(last.openTime, request.timeframe));
  return {
    schemaVersion: OHLCV_EXPORT_SCHEMA_VERSION,
    runId,
    stepId,
    symbol: request.symbol,
    timeframe: request.timeframe,
    // The cut; a run without asOf (created before it existed) is described up to its data's end.
    asOf: request.asOf === undefined ? to : formatTimestamp(request.asOf),
    source: orderedSource(series.source),
    range: { from: first.openTime, to },
    candles: [first, ...rest],
    candleCount: rest.length + 1,
    incompleteBucketPolicy: series.incompleteBucketPolicy,
  };
}

function toOhlcvCandle(candle: Candle): OhlcvCandle {
  return {
    openTime: formatTimestamp(candle.openTime),
    open: candle.open,
    high: candle.high,
    low: candle.low,
    close: candle.close,
    volume: candle.volume,
    ...(candle.complete === false ? { complete: false } : {}),
  };
}

const SOURCE_KEY_ORDER = [
  'provider',
  'dataset',
  'exchange',
  'marketSymbol',
  'sourceTimeframe',
  'volumeUnit',
] as const;

/** Known source fields in schema order, then any adapter-specific ones sorted by name. */
function orderedSource(source: OhlcvSource): OhlcvSource {
  const ordered: OhlcvSource = { provider: source.provider };
  const known: readonly string[] = SOURCE_KEY_ORDER;
  const keys = [
    ...SOURCE_KEY_ORDER,
    ...Object.keys(source)
      .filter((k) => !known.includes(k))
      .sort(),
  ];
  for (const key of keys) {
    const value = source[key];
    if (value !== undefined) ordered[key] = value;
  }
  return ordered;
}

function serialize(artifact: OhlcvExport): Buffer {
  return Buffer.from(`${JSON.stringify(artifact, null, 2)}\n`, 'utf8');
}

/** Small facts for outputs.execution.marketData (never the candles themselves). */
function executionSummary(artifact: OhlcvExport): Record<string, unknown> {
  const { provider, dataset, exchange, marketSymbol } = artifact.source;
  return {
    provider,
    ...(dataset === undefined ? {} : { dataset }),
    ...(exchange === undefined ? {} : { exchange }),
    ...(marketSymbol === undefined ? {} : { marketSymbol }),
    candleCount: artifact.candleCount,
    range: artifact.range,
  };
}

function describeSource(source: OhlcvSource): string {
  return source.provider === 'bundled'
    ? `bundled dataset ${String(source.dataset)}`
    : `exchange ${String(source.exchange)}`;
}
