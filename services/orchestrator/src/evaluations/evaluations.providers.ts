import type { Provider } from '@nestjs/common';
import { InMemoryEvaluationStore } from '@tda/flow-store';
import { BundledCandleSource, type CandleSource } from '@tda/market-data';
import type { OrchestratorModuleOptions } from '../orchestrator.options';
import { EvaluationsService } from './evaluations.service';
import { EVALUATION_STORE, SCORING_CANDLES } from './evaluations.tokens';
import { RecommendationScorer } from './recommendation-scorer.service';

function isCandleSource(source: object | undefined): source is CandleSource {
  return source !== undefined && 'fetchCandles' in source;
}

/** Evaluations: the store (default in memory), the candles they are scored on, the services. */
export function evaluationProviders(options: OrchestratorModuleOptions): Provider[] {
  return [
    { provide: EVALUATION_STORE, useValue: options.evaluations ?? new InMemoryEvaluationStore() },
    {
      provide: SCORING_CANDLES,
      useValue: isCandleSource(options.marketData) ? options.marketData : new BundledCandleSource(),
    },
    RecommendationScorer,
    EvaluationsService,
  ];
}
