import { Inject, Injectable } from '@nestjs/common';
import type { FlowRun, RunScope } from '@tda/contracts';
import { marketDataNeeds } from '@tda/flow-engine';
import { resolveAsOf, type CandleSource } from '@tda/market-data';
import { MARKET_COVERAGE } from '../orchestrator.tokens';

/** Scope fields the preflight fills when the request leaves them out. */
export const TRIGGER_RESOLVED_SCOPE_FIELDS = ['asOf'] as const;

/** What the preflight reads of the market data source: how far each series reaches. */
export type MarketCoverage = Pick<CandleSource, 'coverage'>;

/**
 * Trigger-time checks that need I/O, between building a run (pure, flow-engine) and creating
 * it: everything a run refers to must exist and agree, so a bad run is a clear 4xx now rather
 * than a FAILED step later, and nothing is written before it passes.
 *
 * - asOf (DESIGN §2): the run's one moment. Default: the newest moment every series of the run
 *   reaches (the newest complete candle); a requested asOf outside any series' range is a 400
 *   naming the timeframe and the available range (never a run that mixes periods).
 */
@Injectable()
export class RunPreflight {
  constructor(@Inject(MARKET_COVERAGE) private readonly market: MarketCoverage) {}

  /** The run's scope with everything resolved that the trigger fixes (asOf). */
  async resolveScope(draft: FlowRun, _ownerId: string): Promise<RunScope> {
    return { ...draft.scope, asOf: await this.asOf(draft) };
  }

  private async asOf(draft: FlowRun): Promise<string> {
    const coverages = await Promise.all(
      marketDataNeeds(draft).map(({ symbol, timeframe }) =>
        this.market.coverage(symbol, timeframe),
      ),
    );
    const requested = draft.scope.asOf === undefined ? undefined : Date.parse(draft.scope.asOf);
    const asOf = resolveAsOf(coverages, requested);
    return new Date(asOf).toISOString().replace('.000Z', 'Z');
  }
}
