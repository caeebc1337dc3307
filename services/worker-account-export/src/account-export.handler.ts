import type { AccountSource, AccountState, AccountStatePosition } from '@tda/accounts';
import type { AccountSnapshot, MarkPrice } from '@tda/contracts';
import {
  formatTimestamp,
  parseAsOf,
  UnknownSymbolError,
  type CandleSource,
} from '@tda/market-data';
import { ACCOUNT_EXPORT_STEP } from '@tda/step-types';
import {
  StepError,
  type ExistingArtifact,
  type StepContext,
  type StepHandler,
  type StepResult,
} from '@tda/worker-kit';
import { buildSnapshot, serializeSnapshot } from './account-valuation';

type Context = StepContext<typeof ACCOUNT_EXPORT_STEP>;

/** Marks are the last complete close of this timeframe at or before asOf. */
const MARK_TIMEFRAME = '1h';

export interface AccountExportHandlerOptions {
  accounts: AccountSource;
  /** The candles the marks come from (the same selection as the OHLCV worker's). */
  candles: CandleSource;
}

/** A symbol's mark at asOf, or the source's answer that it has no such market. */
type Mark = MarkPrice | UnknownSymbolError;

/**
 * ACCOUNT_EXPORT: the run's account at the run's asOf, valued at the last complete 1h close at or
 * before asOf of every position's symbol and of the run's symbol. The bytes depend only on the
 * account state and the candles (no wall-clock time, fixed key order), so a re-execution writes
 * the same artifact. Balances never leave the artifact: outputs.execution and logs get ids and
 * counts only.
 */
export class AccountExportHandler implements StepHandler<typeof ACCOUNT_EXPORT_STEP> {
  readonly descriptor = ACCOUNT_EXPORT_STEP;

  constructor(private readonly options: AccountExportHandlerOptions) {}

  async execute(context: Context): Promise<StepResult> {
    const { run, stepId, signal, inputs } = context;
    const symbol = inputs.symbol ?? run.scope.symbol;
    const asOf = await this.asOfOf(context, symbol);
    context.heartbeat({ stage: 'read_account' });
    const state = await this.options.accounts.stateAt({
      ownerId: run.ownerId,
      accountId: inputs.accountId,
      asOf,
      signal,
    });
    context.heartbeat({ stage: 'mark_prices' });
    const marks = await this.marks([symbol, ...state.positions.map((p) => p.symbol)], asOf, signal);
    signal.throwIfAborted();
    const runMark = marks.get(symbol);
    if (runMark instanceof UnknownSymbolError) throw runMark;
    const { marked, unpriced } = markPositions(state.positions, marks);
    const snapshot = buildSnapshot({
      runId: run.runId,
      stepId,
      accountId: inputs.accountId,
      asOf: formatTimestamp(asOf),
      state,
      marked,
      prices: [...marks.values()].filter((m): m is MarkPrice => !(m instanceof UnknownSymbolError)),
    });
    const uri = context.artifactUri('.json');
    return {
      artifacts: [{ uri, data: serializeSnapshot(snapshot), contentType: 'application/json' }],
      primaryUri: uri,
      execution: { account: executionSummary(snapshot, state, unpriced) },
    };
  }

  /**
   * Split-brain recovery: the harness checked the snapshot is this run's and step's; vouch for it
   * only if it is of these inputs (account, asOf, the run's symbol priced), else execute again.
   */
  recover(
    existing: ExistingArtifact<AccountSnapshot>,
    context: Context,
  ): Promise<StepResult | null> {
    const { artifact } = existing;
    const symbol = context.inputs.symbol ?? context.run.scope.symbol;
    const { asOf } = context.run.scope;
    const same =
      artifact.accountId === context.inputs.accountId &&
      (asOf === undefined || Date.parse(artifact.asOf) === parseAsOf(asOf)) &&
      (artifact.prices ?? []).some((p) => p.symbol === symbol);
    return Promise.resolve(
      same
        ? {
            artifacts: [],
            primaryUri: existing.uri,
            execution: { account: executionSummary(artifact) },
          }
        : null,
    );
  }

  /** run.scope.asOf; a run without one (created before it existed): the end of the 1h data. */
  private async asOfOf(context: Context, symbol: string): Promise<number> {
    const { asOf } = context.run.scope;
    if (asOf !== undefined) return parseAsOf(asOf);
    return (await this.options.candles.coverage(symbol, MARK_TIMEFRAME)).to;
  }

  /** One mark per distinct symbol spelling, in first-seen order. */
  private async marks(
    symbols: readonly string[],
    asOf: number,
    signal: AbortSignal,
  ): Promise<Map<string, Mark>> {
    const marks = new Map<string, Mark>();
    for (const symbol of symbols) {
      if (marks.has(symbol)) continue;
      marks.set(symbol, await this.markOf(symbol, asOf, signal));
    }
    return marks;
  }

  private async markOf(symbol: string, asOf: number, signal: AbortSignal): Promise<Mark> {
    let series;
    try {
      series = await this.options.candles.fetchCandles({
        symbol,
        timeframe: MARK_TIMEFRAME,
        asOf,
        limit: 1,
        incompleteBucketPolicy: 'dropped',
        signal,
      });
    } catch (error) {
      if (error instanceof UnknownSymbolError) return error;
      throw error;
    }
    const candle = series.candles[series.candles.length - 1];
    if (candle === undefined || !(candle.close > 0)) {
      throw new StepError(
        'MARKET_DATA_UNAVAILABLE',
        `no complete ${MARK_TIMEFRAME} candle of ${symbol} at or before asOf ${formatTimestamp(asOf)}`,
        {
          details: { symbol, timeframe: MARK_TIMEFRAME, asOf: formatTimestamp(asOf) },
          retryable: false,
        },
      );
    }
    return {
      symbol,
      price: candle.close,
      candleOpenTime: formatTimestamp(candle.openTime),
      timeframe: MARK_TIMEFRAME,
    };
  }
}

/**
 * Each position with its mark. A symbol without market data is the run's mistake for a paper
 * position or a derivative (INVALID_STEP_INPUTS, naming what exists), and for an exchange's spot
 * holding a currency TDA cannot price (left out, counted).
 */
function markPositions(
  positions: readonly AccountStatePosition[],
  marks: ReadonlyMap<string, Mark>,
): { marked: { position: AccountStatePosition; mark: number }[]; unpriced: number } {
  const marked: { position: AccountStatePosition; mark: number }[] = [];
  let unpriced = 0;
  for (const position of positions) {
    const mark = marks.get(position.symbol);
    if (mark === undefined) throw new Error(`unreachable: ${position.symbol} was not marked`);
    if (!(mark instanceof UnknownSymbolError)) {
      marked.push({ position, mark: mark.price });
    } else if (position.origin === 'holding') {
      unpriced += 1;
    } else {
      throw mark;
    }
  }
  return { marked, unpriced };
}

/** outputs.execution.account: ids and counts, never cash, sizes or prices. */
function executionSummary(
  snapshot: AccountSnapshot,
  state?: AccountState,
  unpricedHoldings = 0,
): Record<string, unknown> {
  return {
    accountId: snapshot.accountId,
    provider: snapshot.source.provider,
    ...(snapshot.source.exchange === undefined ? {} : { exchange: snapshot.source.exchange }),
    asOf: snapshot.asOf,
    positions: snapshot.positions.length,
    pricedSymbols: (snapshot.prices ?? []).length,
    ...state?.notes,
    ...(unpricedHoldings > 0 ? { unpricedHoldings } : {}),
  };
}
