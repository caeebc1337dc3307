import {
  countVariants,
  gridRequestOf,
  toCandleArrays,
  type CandleArrays,
  type Progress,
  type VariantScore,
} from '@tda/backtest';
import type { BacktestInputs, Timeframe } from '@tda/contracts';
import {
  fixedDurationMs,
  formatTimestamp,
  findCandleProblems,
  type CandleSource,
} from '@tda/market-data';
import { describeError, logEvent, type Logger } from '@tda/observability';
import { BACKTEST_STEP } from '@tda/step-types';
import { StepError, type StepContext, type StepHandler, type StepResult } from '@tda/worker-kit';
import { runBacktestJob, type BacktestStage, type JobSettings } from './backtest-job';
import { buildBacktestResult, buildSnapshot } from './backtest-result';

type Context = StepContext<typeof BACKTEST_STEP>;

export interface BacktestHandlerDeps {
  candles: CandleSource;
  logger: Logger;
  settings: Omit<JobSettings, 'topKPersistedDefault'>;
}

/** A month bar counts as 30 days in the annualized Sharpe ratio. */
function barMs(timeframe: Timeframe): number {
  return timeframe === '1M' ? 30 * 86_400_000 : fixedDurationMs(timeframe);
}

/**
 * BACKTEST (seed 003 backtest job): the newest `bars` complete candles by the run's asOf, then
 * stage A → stage B → finalizing (libs/backtest). Progress goes to the heartbeat (the step's
 * `progress`), best-so-far to the step's checkpoint (backtest_snapshot, fenced by the lease); a
 * cancel is honoured at the next batch boundary (the harness finalizes CANCELLED, no report).
 */
export class BacktestHandler implements StepHandler<typeof BACKTEST_STEP> {
  readonly descriptor = BACKTEST_STEP;

  constructor(private readonly deps: BacktestHandlerDeps) {}

  async execute(ctx: Context): Promise<StepResult> {
    const { inputs } = ctx;
    const asOf = ctx.run.scope.asOf;
    if (asOf === undefined) throw new StepError('INVALID_STEP_INPUTS', 'the run has no scope.asOf');
    const { candles, source } = await this.load(inputs, Date.parse(asOf), ctx.signal);
    const grid = gridRequestOf(inputs);
    const settings = { ...this.deps.settings, topKPersistedDefault: inputs.topKPersistedDefault };
    const outcome = await runBacktestJob(candles, grid, settings, this.reporter(ctx));
    if (outcome.kind === 'aborted') {
      ctx.signal.throwIfAborted();
      throw new StepError('INTERNAL_ERROR', `backtest stopped in ${outcome.stage} without a cause`);
    }
    const counts = countVariants(grid);
    const result = buildBacktestResult({
      run: ctx.run,
      stepId: ctx.stepId,
      inputs,
      asOf,
      source,
      candles,
      counts: { ...counts, shortlist: outcome.shortlist, stageB: outcome.stageBUnits },
      top: outcome.top,
    });
    const uri = ctx.artifactUri();
    return {
      artifacts: [
        { uri, data: Buffer.from(JSON.stringify(result)), contentType: 'application/json' },
      ],
      primaryUri: uri,
      outputs: { variants: counts.expanded, persisted: result.top.length },
    };
  }

  private reporter(ctx: Context) {
    const { logger } = this.deps;
    return {
      progress: (stage: BacktestStage, p: Progress) =>
        ctx.heartbeat({ stage, processedUnits: p.processed, totalUnits: p.total }),
      snapshot: async (stage: BacktestStage, p: Progress, top: VariantScore[]) => {
        const doc = buildSnapshot({ ...ctx, now: ctx.now() }, stage, p, top);
        try {
          const outcome = await ctx.checkpoint(doc);
          logEvent(logger, 'debug', 'step_checkpoint', {
            ok: outcome === 'written',
            outcome,
            stage,
          });
        } catch (error) {
          // A missed snapshot only delays what GET /top shows; the job goes on.
          logEvent(logger, 'warn', 'step_checkpoint', { ok: false, error: describeError(error) });
        }
      },
      aborted: () => ctx.signal.aborted,
      now: () => ctx.now().getTime(),
    };
  }

  private async load(
    inputs: BacktestInputs,
    asOf: number,
    signal: AbortSignal,
  ): Promise<{ candles: CandleArrays; source: string }> {
    const { symbol, timeframe, bars } = inputs;
    const series = await this.deps.candles.fetchCandles({
      symbol,
      timeframe,
      limit: bars,
      asOf,
      incompleteBucketPolicy: 'dropped',
      signal,
    });
    const problems = findCandleProblems(series.candles);
    if (series.candles.length < 2 || problems.length > 0) {
      throw new StepError(
        'MARKET_DATA_UNAVAILABLE',
        `no usable ${timeframe} candles for ${symbol} up to asOf ${formatTimestamp(asOf)}`,
        {
          details: {
            symbol,
            timeframe,
            candles: series.candles.length,
            problems: problems.slice(0, 5),
          },
        },
      );
    }
    const { provider, dataset, exchange } = series.source;
    return {
      candles: toCandleArrays(series.candles, barMs(timeframe)),
      source: `${provider}:${dataset ?? exchange ?? 'unknown'}`,
    };
  }
}
