import { Inject, Injectable } from '@nestjs/common';
import { parsePeriod, walkForwardAsOfs } from '@tda/backtest';
import {
  TdaError,
  validate,
  type EvaluationPage,
  type EvaluationRequest,
  type EvaluationView,
  type FlowRun,
  type RecommendationEvaluation,
  type RunScope,
} from '@tda/contracts';
import {
  decideTopUp,
  EVALUATION_TRIGGER_PREFIX,
  evaluationIdFor,
  evaluationIdOfSource,
  evaluationPointKey,
  InvalidRequestError,
  isTerminalRunStatus,
  RECOMMENDATION_FLOW_KEY,
  type FlowCatalogue,
  type RandomSource,
} from '@tda/flow-engine';
import {
  EvaluationVersionConflictError,
  type EvaluationStore,
  type FlowRunStore,
  type VersionedEvaluation,
} from '@tda/flow-store';
import { logEvent, type Logger } from '@tda/observability';
import type { OrchestratorConfig } from '../config';
import {
  CLOCK,
  FLOW_CATALOGUE,
  LOGGER,
  ORCHESTRATOR_CONFIG,
  RANDOM,
  RUN_STORE,
  type Clock,
} from '../orchestrator.tokens';
import { strictQuery } from '../runs/run-list-query';
import { RunPreflight } from '../runs/run-preflight.service';
import { RunTrigger } from '../runs/run-trigger.service';
import { RunsService } from '../runs/runs.service';
import { evaluationView, pointItem, type ScoredPoint } from './evaluation.view';
import { EvaluationNotFoundApiError } from './evaluations.errors';
import { EVALUATION_STORE } from './evaluations.tokens';
import { RecommendationScorer } from './recommendation-scorer.service';

/** Conditional writes of one top-up before it gives up (the next run end or GET tries again). */
const WRITE_ATTEMPTS = 3;
const DEFAULT_WINDOW = 2;
const DEFAULT_COSTS = { feeBps: 10, slippageBps: 0 };
/** Scope fields the evaluation sets itself at each point. */
const RESERVED_SCOPE = ['symbol', 'asOf', 'accountId'];

/**
 * Walk-forward evaluations of recommendations (README "Recommendations scored against what
 * happened"): flow 4 at each point of a range, `window` runs at a time (ordinary runs of the
 * owner: queued, quota'd, cancellable), scored on read against the candles after each asOf.
 * The evaluation document is written here only: create-only, then read → decideTopUp (pure,
 * flow-engine) → idempotent triggers → conditional write of the points.
 */
@Injectable()
export class EvaluationsService {
  constructor(
    @Inject(EVALUATION_STORE) private readonly store: EvaluationStore,
    @Inject(RUN_STORE) private readonly runStore: Pick<FlowRunStore, 'get'>,
    private readonly runTrigger: RunTrigger,
    private readonly runPreflight: RunPreflight,
    private readonly runs: RunsService,
    private readonly scorer: RecommendationScorer,
    @Inject(FLOW_CATALOGUE) private readonly catalogue: Pick<FlowCatalogue, 'plan'>,
    @Inject(ORCHESTRATOR_CONFIG) private readonly config: OrchestratorConfig,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(RANDOM) private readonly random: RandomSource,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** POST /evaluations/recommendations → the evaluation (created: false for a repeated key). */
  async create(body: unknown, owner: string): Promise<{ view: EvaluationView; created: boolean }> {
    const evaluation = this.newEvaluation(this.request(body), owner);
    await this.preflight(evaluation);
    const outcome = await this.store.createOnce(evaluation);
    await this.topUp(evaluation.evaluationId);
    return { view: await this.get(evaluation.evaluationId, owner), created: outcome === 'created' };
  }

  /** GET /evaluations/{id}: tops the window up first (a missed run end heals here), then scores. */
  async get(evaluationId: string, owner: string): Promise<EvaluationView> {
    const state = await this.topUp(evaluationId, await this.ownedRead(evaluationId, owner));
    if (state === null) throw new EvaluationNotFoundApiError(evaluationId);
    const { evaluation, runs } = state;
    const points: ScoredPoint[] = [];
    for (const point of evaluation.points) {
      const run = point.runId === undefined ? undefined : runs.get(point.runId);
      points.push(await this.scored(pointItem(point, run), run, evaluation));
    }
    return evaluationView(evaluation, runs, points);
  }

  /** GET /evaluations?limit=&cursor=: the owner's evaluations, newest first (no scores). */
  async list(rawQuery: Record<string, unknown>, owner: string): Promise<EvaluationPage> {
    const { limit, cursor } = strictQuery(rawQuery, ['limit', 'cursor']);
    const parsed = limit === undefined ? 20 : /^[0-9]{1,3}$/.test(limit) ? Number(limit) : 0;
    if (!(parsed >= 1 && parsed <= 100)) {
      throw new InvalidRequestError('limit must be an integer in 1..100', { parameter: 'limit' });
    }
    const page = await this.store.list({
      ownerId: owner,
      limit: parsed,
      ...(cursor === undefined ? {} : { cursor }),
    });
    return { items: page.evaluations, nextCursor: page.nextCursor };
  }

  /** POST /evaluations/{id}/cancel: no more runs, the active ones cancelled. Idempotent. */
  async cancel(evaluationId: string, owner: string): Promise<EvaluationView> {
    for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt += 1) {
      const read = await this.store.get(evaluationId);
      if (read === null || read.evaluation.ownerId !== owner) {
        throw new EvaluationNotFoundApiError(evaluationId);
      }
      if (read.evaluation.cancelRequestedAt !== undefined) break;
      try {
        const at = this.clock().toISOString();
        await this.store.update(evaluationId, { cancelRequestedAt: at }, read.version);
        break;
      } catch (error) {
        if (!(error instanceof EvaluationVersionConflictError)) throw error;
      }
    }
    const evaluation = await this.owned(evaluationId, owner);
    for (const run of (await this.runsOf(evaluation)).values()) {
      if (!isTerminalRunStatus(run.status)) await this.cancelRun(run.runId, owner);
    }
    return this.get(evaluationId, owner);
  }

  /** A run that ended meanwhile answers 409: nothing left to cancel. */
  private async cancelRun(runId: string, owner: string): Promise<void> {
    try {
      await this.runs.cancel(runId, owner);
    } catch (error) {
      if (!(error instanceof TdaError) || error.code !== 'CONFLICT') throw error;
    }
  }

  /** After a run ended (step events): its evaluation's window gets the next point. */
  async afterRun(run: FlowRun): Promise<void> {
    if (!isTerminalRunStatus(run.status)) return;
    const evaluationId = evaluationIdOfSource(run.trigger.source);
    if (evaluationId !== undefined) await this.topUp(evaluationId);
  }

  /**
   * read → decideTopUp → idempotent triggers → conditional write; a lost race decides again.
   * Returns the evaluation as it now stands with its runs (null: there is none).
   */
  async topUp(
    evaluationId: string,
    known?: VersionedEvaluation,
  ): Promise<{ evaluation: RecommendationEvaluation; runs: Map<string, FlowRun> } | null> {
    let read = known ?? (await this.store.get(evaluationId));
    for (let attempt = 1; read !== null && attempt <= WRITE_ATTEMPTS; attempt += 1) {
      const runs = await this.runsOf(read.evaluation);
      const due = decideTopUp(read.evaluation, (runId) => runs.get(runId)?.status);
      if (due.length === 0) return { evaluation: read.evaluation, runs };
      const points = await this.trigger(read.evaluation, due);
      try {
        const written = await this.store.update(evaluationId, { points }, read.version);
        return {
          evaluation: written.evaluation,
          runs: await this.runsOf(written.evaluation, runs),
        };
      } catch (error) {
        if (!(error instanceof EvaluationVersionConflictError)) throw error;
        read = await this.store.get(evaluationId);
      }
    }
    return read === null
      ? null
      : { evaluation: read.evaluation, runs: await this.runsOf(read.evaluation) };
  }

  // ---------------------------------------------------------------------------------------------

  private request(body: unknown): EvaluationRequest {
    const checked = validate.recommendationEvaluationRequest(body);
    if (!checked.ok) {
      throw new InvalidRequestError('invalid evaluation request', { issues: checked.issues });
    }
    const reserved = Object.keys(checked.value.scope ?? {}).filter((k) =>
      RESERVED_SCOPE.includes(k),
    );
    if (reserved.length > 0) {
      throw new InvalidRequestError(`scope may not set ${reserved.join(', ')}`, {
        field: 'scope',
        reserved,
      });
    }
    return checked.value;
  }

  /** The document of a new evaluation; the points and flow 4's scope are checked here (400). */
  private newEvaluation(request: EvaluationRequest, owner: string): RecommendationEvaluation {
    const asOfs = this.points(request).map((ms) =>
      new Date(ms).toISOString().replace('.000Z', 'Z'),
    );
    const scope = { ...(request.scope ?? {}), accountId: request.accountId };
    const now = this.clock().toISOString();
    return {
      schemaVersion: 1,
      evaluationId: evaluationIdFor(owner, request.idempotencyKey, this.random),
      ownerId: owner,
      flowKey: RECOMMENDATION_FLOW_KEY,
      symbol: request.symbol,
      from: request.from,
      to: request.to,
      every: request.every,
      scope,
      costs: {
        feeBps: request.feeBps ?? DEFAULT_COSTS.feeBps,
        slippageBps: request.slippageBps ?? DEFAULT_COSTS.slippageBps,
      },
      window: request.window ?? DEFAULT_WINDOW,
      points: asOfs.map((asOf) => ({ asOf })),
      ...(request.idempotencyKey === undefined ? {} : { idempotencyKey: request.idempotencyKey }),
      createdAt: now,
      updatedAt: now,
    };
  }

  /** The asOfs of the range; too many is a 400 that says how to ask for fewer. */
  private points(request: EvaluationRequest): number[] {
    const max = this.config.TDA_EVALUATION_MAX_POINTS;
    try {
      return walkForwardAsOfs(
        Date.parse(request.from),
        Date.parse(request.to),
        parsePeriod(request.every),
        max,
      );
    } catch (error) {
      const count = error instanceof TdaError ? error.details['count'] : undefined;
      if (typeof count !== 'number') throw error;
      throw new InvalidRequestError(
        `${count} points from ${request.from} to ${request.to} every ${request.every}: at most ${max} (TDA_EVALUATION_MAX_POINTS); take a longer period or a shorter range`,
        { count, max },
      );
    }
  }

  /**
   * The first and the last point as a trigger would check them (flow 4's scope, the account,
   * market data at both ends), so a request that cannot run is a 400 before anything exists.
   */
  private async preflight(evaluation: RecommendationEvaluation): Promise<void> {
    const ends = [evaluation.points[0], evaluation.points.at(-1)];
    for (const point of ends) {
      if (point === undefined) continue;
      const scope = pointScope(evaluation.symbol, evaluation.scope, point.asOf);
      const plan = this.catalogue.plan(evaluation.flowKey, scope);
      await this.runPreflight.resolve(plan, scope, evaluation.ownerId);
    }
  }

  /**
   * Triggers the due points (the point's idempotency key: a repeat finds the same run). A refusal
   * (4xx) marks the point skipped; the owner's quota (429) leaves the rest for later.
   */
  private async trigger(
    evaluation: RecommendationEvaluation,
    due: readonly string[],
  ): Promise<RecommendationEvaluation['points']> {
    const points = evaluation.points.map((p) => ({ ...p }));
    for (const point of points.filter((p) => due.includes(p.asOf))) {
      try {
        const { run } = await this.runTrigger.trigger(
          {
            flowKey: evaluation.flowKey,
            scope: pointScope(evaluation.symbol, evaluation.scope, point.asOf),
            idempotencyKey: evaluationPointKey(evaluation.evaluationId, point.asOf),
            trigger: {
              type: 'SYSTEM',
              source: `${EVALUATION_TRIGGER_PREFIX}${evaluation.evaluationId}`,
            },
          },
          evaluation.ownerId,
        );
        point.runId = run.runId;
      } catch (error) {
        if (!(error instanceof TdaError) || error.retryable) throw error;
        if (error.code === 'QUOTA_EXCEEDED') break;
        point.error = { code: error.code, message: error.message, retryable: false };
        logEvent(this.logger, 'warn', 'evaluation_point_refused', {
          evaluationId: evaluation.evaluationId,
          asOf: point.asOf,
          errorCode: error.code,
        });
      }
    }
    return points;
  }

  private async scored(
    item: ScoredPoint['item'],
    run: FlowRun | undefined,
    evaluation: RecommendationEvaluation,
  ): Promise<ScoredPoint> {
    if (run?.status !== 'SUCCEEDED') return { item, scores: [] };
    try {
      const scores = await this.scorer.scoreRun(run, evaluation.costs);
      return { item: { ...item, recommendations: scores.map((s) => s.view) }, scores };
    } catch (error) {
      if (!(error instanceof TdaError) || error.retryable) throw error;
      return { item: { ...item, error: `${error.code}: ${error.message}` }, scores: [] };
    }
  }

  private async owned(evaluationId: string, owner: string): Promise<RecommendationEvaluation> {
    return (await this.ownedRead(evaluationId, owner)).evaluation;
  }

  /** The evaluation and its version if it is the owner's; 404 for a missing or foreign one. */
  private async ownedRead(evaluationId: string, owner: string): Promise<VersionedEvaluation> {
    const read = await this.store.get(evaluationId);
    if (read === null || read.evaluation.ownerId !== owner) {
      throw new EvaluationNotFoundApiError(evaluationId);
    }
    return read;
  }

  /** The runs of the evaluation's points; those in `known` are not read again. */
  private async runsOf(
    evaluation: RecommendationEvaluation,
    known: ReadonlyMap<string, FlowRun> = new Map(),
  ): Promise<Map<string, FlowRun>> {
    const runs = new Map<string, FlowRun>();
    for (const point of evaluation.points) {
      if (point.runId === undefined) continue;
      const seen = known.get(point.runId);
      if (seen !== undefined) {
        runs.set(point.runId, seen);
        continue;
      }
      const read = await this.runStore.get(point.runId);
      if (read !== null) runs.set(point.runId, read.run);
    }
    return runs;
  }
}

function pointScope(symbol: string, scope: Record<string, unknown>, asOf: string): RunScope {
  return { ...scope, symbol, asOf };
}
