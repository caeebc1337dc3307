import { Inject, Injectable } from '@nestjs/common';
import type { LlmReportInputs, ReportIndexEntry, RunScope } from '@tda/contracts';
import { InvalidRequestError, type FlowPlan, type ReportRefsNeed } from '@tda/flow-engine';
import {
  formatAsOf,
  parseAsOf,
  resolveAsOf,
  UnknownSymbolError,
  UnsupportedTimeframeError,
  type CandleSource,
} from '@tda/market-data';
import { latestReportsByTimeframe, symbolKeyOf, type ReportIndexStore } from '@tda/report-index';
import { AccountsService, type AccountLookup } from '../accounts/accounts.service';
import { MARKET_COVERAGE, REPORT_INDEX } from '../orchestrator.tokens';
import { InvalidReferenceError, ReferenceNotFoundError } from './preflight.errors';

/** Scope fields the preflight fills when the request leaves them out. */
export const TRIGGER_RESOLVED_SCOPE_FIELDS = ['asOf', 'reportRefs'] as const;

/** What the preflight reads of the market data source: how far each series reaches. */
export type MarketCoverage = Pick<CandleSource, 'coverage'>;

type ReportRef = NonNullable<LlmReportInputs['reportRefs']>[number];

/** What the trigger adds to the requested scope. */
export interface ResolvedScope {
  asOf: string;
  reportRefs?: ReportRef[];
}

/**
 * An unknown symbol or timeframe is the request's fault at trigger (400 INVALID_REQUEST naming
 * what is available), not a step's (the source's INVALID_STEP_INPUTS); outages pass through.
 */
function asRequestError(error: unknown): never {
  if (error instanceof UnknownSymbolError || error instanceof UnsupportedTimeframeError) {
    throw new InvalidRequestError(error.message, { field: 'scope.symbol', ...error.details });
  }
  throw error;
}

function refOf(entry: ReportIndexEntry): ReportRef {
  return {
    reportId: entry.reportId,
    gcsUri: entry.gcs_uri,
    runId: entry.runId,
    stepId: entry.stepId,
    ...(entry.timeframe === undefined ? {} : { timeframe: entry.timeframe }),
    // The run's spelling of a moment (the index keeps Date#toISOString for its text order).
    asOf: formatAsOf(Date.parse(entry.asOf)),
  };
}

/**
 * Trigger-time checks that need I/O, between planning a run (pure, flow-engine) and creating
 * it: everything a run refers to must exist for its owner and agree with it, so a bad run is a
 * clear 4xx now rather than a FAILED step later, and nothing is written before it passes.
 *
 * - asOf (DESIGN §2): default the newest moment every series of the run reaches (the newest
 *   complete candle); a requested asOf outside a series' range is a 400 naming the timeframe
 *   and the available range — never a run that mixes periods.
 * - scope.accountId: the owner's account, else 404 (another owner's is not found either).
 * - flow 3's reports: the named reportIds (unknown or another owner's: 404; another symbol or
 *   a later asOf: 422), or the latest report per timeframe at or before asOf (none: 422).
 */
@Injectable()
export class RunPreflight {
  constructor(
    @Inject(MARKET_COVERAGE) private readonly market: MarketCoverage,
    @Inject(AccountsService) private readonly accounts: AccountLookup,
    @Inject(REPORT_INDEX)
    private readonly reports: Pick<ReportIndexStore, 'getReport' | 'listReports'>,
  ) {}

  async resolve(plan: FlowPlan, requested: RunScope, ownerId: string): Promise<ResolvedScope> {
    if (Object.hasOwn(requested, 'reportRefs')) {
      throw new InvalidRequestError(
        'scope.reportRefs is resolved by the trigger: pass scope.reportIds',
        {
          field: 'scope.reportRefs',
        },
      );
    }
    const asOf = await this.asOf(plan);
    if (plan.needs.accountId !== undefined) await this.checkAccount(ownerId, plan.needs.accountId);
    if (plan.needs.reports === undefined) return { asOf };
    return { asOf, reportRefs: await this.reportRefs(ownerId, plan.needs.reports, asOf) };
  }

  private async asOf(plan: FlowPlan): Promise<string> {
    const coverages = await Promise.all(
      plan.needs.marketData.map(({ symbol, timeframe }) =>
        this.market.coverage(symbol, timeframe).catch(asRequestError),
      ),
    );
    const requested = plan.scope.asOf === undefined ? undefined : parseAsOf(plan.scope.asOf);
    return formatAsOf(resolveAsOf(coverages, requested));
  }

  private async checkAccount(ownerId: string, accountId: string): Promise<void> {
    if ((await this.accounts.findOwned(ownerId, accountId)) !== undefined) return;
    throw new ReferenceNotFoundError(
      `account '${accountId}' not found (create it with: npx tda accounts create ${accountId})`,
      { field: 'scope.accountId', accountId },
    );
  }

  private async reportRefs(
    ownerId: string,
    need: ReportRefsNeed,
    asOf: string,
  ): Promise<ReportRef[]> {
    if (need.reportIds !== undefined) return this.namedReports(ownerId, need, need.reportIds, asOf);
    const symbolKey = symbolKeyOf(need.symbol);
    const latest = await latestReportsByTimeframe(this.reports, {
      ownerId,
      symbolKey,
      timeframes: need.timeframes,
      asOf,
    });
    const entries = need.timeframes.flatMap((tf) => (latest[tf] === undefined ? [] : [latest[tf]]));
    if (entries.length === 0) {
      throw new InvalidReferenceError(
        `no report of ${need.symbol} at or before ${asOf} for ${need.timeframes.join(', ')}: run a report flow first (tda reports list)`,
        { field: 'scope.timeframes', symbol: need.symbol, asOf, timeframes: need.timeframes },
      );
    }
    return entries.map(refOf);
  }

  private async namedReports(
    ownerId: string,
    need: ReportRefsNeed,
    reportIds: readonly string[],
    asOf: string,
  ): Promise<ReportRef[]> {
    const found = await Promise.all(reportIds.map((id) => this.reports.getReport(id)));
    const missing = reportIds.filter((_, i) => found[i]?.ownerId !== ownerId);
    if (missing.length > 0) {
      throw new ReferenceNotFoundError(`report(s) not found: ${missing.join(', ')}`, {
        field: 'scope.reportIds',
        reportIds: missing,
      });
    }
    const entries = found.filter((e): e is ReportIndexEntry => e !== null);
    const symbolKey = symbolKeyOf(need.symbol);
    const unusable = entries.flatMap((entry) => {
      if (entry.symbolKey !== symbolKey)
        return [{ reportId: entry.reportId, reason: `symbol ${entry.symbol}` }];
      if (Date.parse(entry.asOf) > Date.parse(asOf)) {
        return [
          { reportId: entry.reportId, reason: `asOf ${entry.asOf} is after the run's ${asOf}` },
        ];
      }
      return [];
    });
    if (unusable.length > 0) {
      throw new InvalidReferenceError(
        `report(s) cannot be aggregated into a ${need.symbol} run as of ${asOf}: ${unusable
          .map((u) => `${u.reportId} (${u.reason})`)
          .join(', ')}`,
        { field: 'scope.reportIds', symbol: need.symbol, asOf, reports: unusable },
      );
    }
    return entries.map(refOf);
  }
}
