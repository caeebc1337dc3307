import { walkForwardTable, type RecommendationScore } from '@tda/backtest';
import type {
  EvaluationItem,
  EvaluationView,
  FlowRun,
  RecommendationEvaluation,
} from '@tda/contracts';
import { evaluationState, isTerminalRunStatus } from '@tda/flow-engine';

type Scored = NonNullable<EvaluationItem['recommendations']>[number];

/** One point as the view shows it: its run and, once scored, its recommendations. */
export interface ScoredPoint {
  item: EvaluationItem;
  /** The raw scores behind item.recommendations, for the table. */
  scores: { view: Scored; score: RecommendationScore }[];
}

/** GET /evaluations/{id}: the document, the points with their scores, the table (pure). */
export function evaluationView(
  evaluation: RecommendationEvaluation,
  runs: ReadonlyMap<string, FlowRun>,
  points: readonly ScoredPoint[],
): EvaluationView {
  const statusOf = (runId: string) => runs.get(runId)?.status;
  const triggered = evaluation.points.filter((p) => p.runId !== undefined);
  const count = (status: FlowRun['status']) =>
    triggered.filter((p) => p.runId !== undefined && statusOf(p.runId) === status).length;
  const table = walkForwardTable(
    points.flatMap((p) =>
      p.scores.map(({ view, score }) => ({
        group: { provider: view.provider, modelName: view.modelName, promptId: view.promptId },
        score,
      })),
    ),
  );
  return {
    evaluationId: evaluation.evaluationId,
    ownerId: evaluation.ownerId,
    state: evaluationState(evaluation, statusOf),
    symbol: evaluation.symbol,
    from: evaluation.from,
    to: evaluation.to,
    every: evaluation.every,
    scope: evaluation.scope,
    costs: evaluation.costs,
    window: evaluation.window,
    createdAt: evaluation.createdAt,
    ...(evaluation.cancelRequestedAt === undefined
      ? {}
      : { cancelRequestedAt: evaluation.cancelRequestedAt }),
    counts: {
      points: evaluation.points.length,
      triggered: triggered.length,
      active: triggered.filter((p) => {
        const status = p.runId === undefined ? undefined : statusOf(p.runId);
        return status === undefined || !isTerminalRunStatus(status);
      }).length,
      succeeded: count('SUCCEEDED'),
      failed: count('FAILED'),
      cancelled: count('CANCELLED'),
    },
    items: points.map((p) => p.item),
    table,
  };
}

/** A point without scores: its run's status, or why it has no run. */
export function pointItem(
  point: RecommendationEvaluation['points'][number],
  run: FlowRun | undefined,
): EvaluationItem {
  return {
    asOf: point.asOf,
    ...(point.runId === undefined ? {} : { runId: point.runId }),
    ...(run === undefined ? {} : { runStatus: run.status }),
    ...(point.error === undefined ? {} : { error: `${point.error.code}: ${point.error.message}` }),
    ...(run?.status === 'FAILED' && run.error !== undefined
      ? { error: `${run.error.code}: ${run.error.message}` }
      : {}),
  };
}
