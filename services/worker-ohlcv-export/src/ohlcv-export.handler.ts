import {
  SYMBOL_PATTERN,
  validate,
  type FlowRun,
  type FlowStep,
  type OhlcvCandle,
  type OhlcvExport,
  type OhlcvSource,
  type Timeframe,
} from '@tda/contracts';
import { DEFAULT_LOOKBACK } from '@tda/flow-engine';
import {
  findCandleProblems,
  formatTimestamp,
  isTimeframe,
  MarketDataError,
  nextBucketStart,
  type Candle,
  type CandleSeries,
  type CandleSource,
  type IncompleteBucketPolicy,
} from '@tda/market-data';
import {
  StepError,
  StepInputError,
  type StepExecutionContext,
  type StepHandler,
  type StepRecoveryContext,
  type StepResult,
} from '@tda/worker-kit';

/** Validated `steps.<id>.inputs` of an OHLCV_EXPORT step. */
export interface OhlcvInputs {
  /** As the user wrote it (inputs.symbol, else run.scope.symbol). */
  symbol: string;
  /** The step's timeframe. */
  timeframe: Timeframe;
  /** Number of candles (bars) to export, 1..MAX_LOOKBACK. */
  lookback: number;
}

/** One request's worth on Binance; more would need pagination and is rarely useful on a chart. */
export const MAX_LOOKBACK = 1000;

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

interface InputProblem {
  field: string;
  problem: string;
}

/**
 * OHLCV_EXPORT: reads candles from the configured CandleSource and returns the `ohlcv_export`
 * artifact (contracts/ohlcv_export.schema.json), validated before it is returned. The bytes depend
 * only on the run, the step and the source data (no wall-clock time, fixed key order), so a
 * re-execution writes identical bytes under the same name.
 */
export class OhlcvExportHandler implements StepHandler<OhlcvInputs> {
  readonly stepType = 'OHLCV_EXPORT' as const;
  private readonly candles: CandleSource;
  private readonly policy: IncompleteBucketPolicy;

  constructor(options: OhlcvExportHandlerOptions) {
    this.candles = options.candles;
    this.policy = options.incompleteBucketPolicy ?? 'marked';
  }

  validateInputs(run: FlowRun, stepId: string, step: FlowStep): OhlcvInputs {
    const problems: InputProblem[] = [];
    const raw: unknown = step.inputs;
    const inputs: Record<string, unknown> =
      typeof raw === 'object' && raw !== null && !Array.isArray(raw)
        ? (raw as Record<string, unknown>)
        : {};
    if (inputs !== raw) problems.push({ field: 'inputs', problem: 'must be an object' });

    // Only an absent field takes the default: an explicit null is a bad value, reported as such.
    const symbol = inputs['symbol'] === undefined ? run.scope.symbol : inputs['symbol'];
    if (typeof symbol !== 'string' || !SYMBOL_PATTERN.test(symbol)) {
      problems.push({
        field: 'symbol',
        problem: `must be a symbol like BTC-USDT, BTC/USDT or BTCUSDT (got ${describe(symbol)})`,
      });
    }

    const requested = inputs['timeframe'];
    let timeframe: Timeframe | undefined;
    if (requested !== undefined && !isTimeframe(requested)) {
      problems.push({
        field: 'timeframe',
        problem: `must be one of 1h, 4h, 1d, 1w, 1M (got ${describe(requested)})`,
      });
    } else if (
      requested !== undefined &&
      step.timeframe !== undefined &&
      requested !== step.timeframe
    ) {
      problems.push({
        field: 'timeframe',
        problem: `must equal the step's timeframe ${step.timeframe} (got ${requested})`,
      });
    } else {
      timeframe = requested ?? step.timeframe;
      if (timeframe === undefined) {
        problems.push({
          field: 'timeframe',
          problem: 'missing (neither inputs nor step have one)',
        });
      }
    }

    const lookback =
      inputs['lookback'] === undefined && timeframe !== undefined
        ? DEFAULT_LOOKBACK[timeframe]
        : inputs['lookback'];
    if (
      lookback !== undefined &&
      (typeof lookback !== 'number' ||
        !Number.isInteger(lookback) ||
        lookback < 1 ||
        lookback > MAX_LOOKBACK)
    ) {
      problems.push({
        field: 'lookback',
        problem: `must be an integer from 1 to ${MAX_LOOKBACK} (got ${describe(lookback)})`,
      });
    }

    if (
      problems.length > 0 ||
      typeof symbol !== 'string' ||
      timeframe === undefined ||
      typeof lookback !== 'number'
    ) {
      throw new StepInputError(
        `invalid OHLCV_EXPORT inputs for ${stepId}: ${problems.map((p) => `${p.field} ${p.problem}`).join('; ')}`,
        { stepId, problems },
      );
    }
    return { symbol, timeframe, lookback };
  }

  async execute(context: StepExecutionContext<OhlcvInputs>): Promise<StepResult> {
    const { run, stepId, inputs, signal } = context;
    signal.throwIfAborted();
    context.heartbeat({ stage: 'fetch_candles' });
    const series = await this.fetch(inputs, signal);
    signal.throwIfAborted();

    const artifact = buildArtifact(run.runId, stepId, inputs, series);
    const checked = validate.ohlcvExport(artifact);
    if (!checked.ok) {
      throw new StepError(
        'INTERNAL_ERROR',
        'the OHLCV artifact does not satisfy ohlcv_export.schema.json',
        { details: { stepId, issues: checked.issues.slice(0, 10) }, retryable: false },
      );
    }
    const uri = context.artifactUri('.json');
    return {
      artifacts: [{ uri, data: serialize(artifact), contentType: 'application/json' }],
      primaryUri: uri,
      execution: { marketData: executionSummary(artifact) },
    };
  }

  /**
   * Split-brain recovery: a previous attempt wrote the artifact and died before finalizing. Vouch
   * for it only if it is a valid ohlcv_export of this very run, step and inputs; otherwise
   * (null) the harness executes again.
   */
  async recover(context: StepRecoveryContext<OhlcvInputs>): Promise<StepResult | null> {
    const bytes = await context.artifacts.read(context.existingUri);
    let parsed: unknown;
    try {
      parsed = JSON.parse(bytes.toString('utf8'));
    } catch {
      return null;
    }
    const checked = validate.ohlcvExport(parsed);
    if (!checked.ok) return null;
    const existing = checked.value;
    const { inputs } = context;
    if (
      existing.runId !== context.run.runId ||
      existing.stepId !== context.stepId ||
      existing.symbol !== inputs.symbol ||
      existing.timeframe !== inputs.timeframe ||
      existing.candleCount !== existing.candles.length ||
      existing.candleCount > inputs.lookback
    ) {
      return null;
    }
    return {
      artifacts: [],
      primaryUri: context.existingUri,
      execution: { marketData: executionSummary(existing) },
    };
  }

  private async fetch(inputs: OhlcvInputs, signal: AbortSignal): Promise<CandleSeries> {
    const { symbol, timeframe, lookback } = inputs;
    let series: CandleSeries;
    try {
      series = await this.candles.fetchCandles({
        symbol,
        timeframe,
        limit: lookback,
        incompleteBucketPolicy: this.policy,
        signal,
      });
    } catch (error) {
      if (signal.aborted || !(error instanceof MarketDataError)) throw error;
      if (error.code === 'INVALID_STEP_INPUTS') {
        throw new StepInputError(error.message, { ...error.details });
      }
      throw new StepError(error.code, error.message, {
        details: { ...error.details },
        retryable: error.retryable,
        cause: error,
      });
    }
    if (series.candles.length === 0) {
      throw new StepError(
        'MARKET_DATA_UNAVAILABLE',
        `no ${timeframe} candles for ${symbol} from ${describeSource(series.source)}`,
        { details: { symbol, timeframe, source: series.source }, retryable: false },
      );
    }
    const problems = findCandleProblems(series.candles);
    if (problems.length > 0) {
      throw new StepError(
        'MARKET_DATA_UNAVAILABLE',
        `${describeSource(series.source)} returned inconsistent candles for ${symbol} ${timeframe}`,
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

/** The artifact with a fixed key order (schema order), so the bytes are reproducible. */
function buildArtifact(
  runId: string,
  stepId: string,
  inputs: OhlcvInputs,
  series: CandleSeries,
): OhlcvExport {
  const candles = series.candles.map(toOhlcvCandle);
  const [first] = candles;
  const last = series.candles[series.candles.length - 1];
  if (first === undefined || last === undefined) {
    throw new StepError('INTERNAL_ERROR', 'no candles to export', {
      details: { stepId },
      retryable: false,
    });
  }
  return {
    schemaVersion: OHLCV_EXPORT_SCHEMA_VERSION,
    runId,
    stepId,
    symbol: inputs.symbol,
    timeframe: inputs.timeframe,
    source: orderedSource(series.source),
    range: {
      from: first.openTime,
      to: formatTimestamp(nextBucketStart(last.openTime, inputs.timeframe)),
    },
    candles: [first, ...candles.slice(1)],
    candleCount: candles.length,
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

/** A bad value for an error message: short primitives as they are, anything else by type. */
function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'string') return value.length <= 40 ? `'${value}'` : 'a long string';
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}
