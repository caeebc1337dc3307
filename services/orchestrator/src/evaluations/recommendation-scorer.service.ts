import { Inject, Injectable } from '@nestjs/common';
import {
  scoreRecommendation,
  toCandleArrays,
  type RecommendationScore,
  type ScoringCosts,
} from '@tda/backtest';
import { TdaError, validate, type EvaluationItem, type FlowRun } from '@tda/contracts';
import type { CandleSource } from '@tda/market-data';
import { StepArtifactService } from '../runs/step-artifact.service';
import { SCORING_CANDLES } from './evaluations.tokens';

type ScoredRecommendation = NonNullable<EvaluationItem['recommendations']>[number];

/** A recommendation's score as the view shows it, and the raw score behind it (the table). */
export interface RecommendationScoring {
  view: ScoredRecommendation;
  score: RecommendationScore;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * Scores the recommendations of one SUCCEEDED run of flow 4 against what happened after its
 * asOf (libs/backtest scoreRecommendation on 1h candles): only the candles from the bar before
 * asOf to the end of the horizon are read, so a score can never use more than that window.
 */
@Injectable()
export class RecommendationScorer {
  constructor(
    private readonly artifacts: StepArtifactService,
    @Inject(SCORING_CANDLES) private readonly candles: Pick<CandleSource, 'fetchCandles'>,
  ) {}

  async scoreRun(run: FlowRun, costs: ScoringCosts): Promise<RecommendationScoring[]> {
    const steps = Object.entries(run.steps)
      .filter(([, s]) => s.stepType === 'LLM_RECOMMENDATION' && s.status === 'SUCCEEDED')
      .map(([stepId]) => stepId)
      .sort();
    const scored: RecommendationScoring[] = [];
    for (const stepId of steps) scored.push(await this.scoreStep(run, stepId, costs));
    return scored;
  }

  private async scoreStep(
    run: FlowRun,
    stepId: string,
    costs: ScoringCosts,
  ): Promise<RecommendationScoring> {
    const artifact = await this.artifacts.read(run.runId, stepId, run.ownerId);
    const checked = validate.llmRecommendationFile(JSON.parse(artifact.bytes.toString('utf8')));
    if (!checked.ok) {
      throw new TdaError(
        'INTERNAL_ERROR',
        `the recommendation of ${run.runId}/${stepId} is invalid`,
        {
          details: { runId: run.runId, stepId },
        },
      );
    }
    const { metadata, output } = checked.value;
    const asOf = Date.parse(metadata.asOf);
    const reco = {
      asOf,
      action: output.action,
      horizonDays: output.horizon.days,
      ...(output.stopLoss === undefined ? {} : { stopLoss: output.stopLoss }),
      ...(output.takeProfit === undefined ? {} : { takeProfit: output.takeProfit }),
    };
    const series = await this.candles.fetchCandles({
      symbol: run.scope.symbol,
      timeframe: '1h',
      from: asOf - HOUR_MS,
      to: asOf + output.horizon.days * DAY_MS,
    });
    const score = scoreRecommendation(reco, toCandleArrays(series.candles, HOUR_MS), costs);
    const view = {
      stepId,
      provider: metadata.provider,
      modelName: metadata.modelName,
      promptId: metadata.promptId,
      action: output.action,
      horizonDays: output.horizon.days,
      score: scoreView(score),
    };
    return { view, score };
  }
}

/** The contract's shape: instants as timestamps, absent instead of null for the position fields. */
export function scoreView(score: RecommendationScore): ScoredRecommendation['score'] {
  const at = (ms: number | null) => (ms === null ? {} : { at: new Date(ms).toISOString() });
  const entry = at(score.entryTime).at;
  const exit = at(score.exitTime).at;
  return {
    status: score.status,
    direction: score.direction,
    ...(entry === undefined ? {} : { entryAt: entry }),
    ...(score.entryPrice === null ? {} : { entryPrice: score.entryPrice }),
    ...(exit === undefined ? {} : { exitAt: exit }),
    ...(score.exitPrice === null ? {} : { exitPrice: score.exitPrice }),
    ...(score.exitReason === null ? {} : { exitReason: score.exitReason }),
    hit: score.hit,
    returnPct: score.returnPct,
    maePct: score.maePct,
    buyAndHoldPct: score.buyAndHoldPct,
  };
}
