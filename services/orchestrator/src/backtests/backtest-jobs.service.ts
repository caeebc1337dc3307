import { Inject, Injectable } from '@nestjs/common';
import {
  validate,
  type BacktestJob,
  type BacktestJobPage,
  type BacktestResult,
  type BacktestSnapshot,
  type BacktestTop,
  type FlowRun,
  type RunStatus,
} from '@tda/contracts';
import { BACKTEST_FLOW_KEY, InvalidRequestError } from '@tda/flow-engine';
import type { FlowRunStore, StepCheckpointStore } from '@tda/flow-store';
import type { OrchestratorConfig } from '../config';
import { ORCHESTRATOR_CONFIG, RUN_STORE } from '../orchestrator.tokens';
import { parseRunListQuery, strictQuery } from '../runs/run-list-query';
import { RunTrigger } from '../runs/run-trigger.service';
import { RunsService } from '../runs/runs.service';
import { StepArtifactService } from '../runs/step-artifact.service';
import { BacktestJobNotFoundError, BacktestQuotaError } from './backtest-jobs.errors';
import {
  backtestJobView,
  backtestStepOf,
  backtestTopView,
  JOB_STATE_OF_STATUS,
  runStatusOfState,
} from './backtest-job.view';
import { CHECKPOINT_STORE } from './backtests.tokens';

const ACTIVE: readonly RunStatus[] = ['PENDING', 'RUNNING'];
export const TOP_LIMIT_MAX = 1_000;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Backtest jobs (seed 003) as a façade over runs of flow backtest_v1: the job id is the runId,
 * create is a trigger (the flow checks every guard: 422), cancel is the run's cancel, results come
 * from the step's checkpoint (running) or artifact (succeeded). Owner-only like the runs.
 */
@Injectable()
export class BacktestJobsService {
  constructor(
    private readonly runs: RunsService,
    private readonly runTrigger: RunTrigger,
    private readonly artifacts: StepArtifactService,
    @Inject(RUN_STORE) private readonly store: Pick<FlowRunStore, 'list'>,
    @Inject(CHECKPOINT_STORE) private readonly checkpoints: StepCheckpointStore | null,
    @Inject(ORCHESTRATOR_CONFIG) private readonly config: OrchestratorConfig,
  ) {}

  /** POST /backtests/jobs: `{...request, idempotencyKey?}` → the job (created: false on a repeat). */
  async create(body: unknown, owner: string): Promise<{ job: BacktestJob; created: boolean }> {
    if (!isObject(body)) throw new InvalidRequestError('the body must be a JSON object', {});
    const { idempotencyKey, ...scope } = body;
    if (idempotencyKey === undefined || !(await this.exists(owner, idempotencyKey))) {
      await this.checkQuota(owner);
    }
    const trigger = {
      flowKey: BACKTEST_FLOW_KEY,
      scope,
      ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
    };
    const { run, created } = await this.runTrigger.trigger(trigger, owner);
    return { job: backtestJobView(run), created };
  }

  async get(jobId: string, owner: string): Promise<BacktestJob> {
    return backtestJobView(await this.run(jobId, owner));
  }

  /** GET /backtests/jobs/{jobId}/top?limit= (default and max: TOP_LIMIT_MAX). */
  async top(jobId: string, owner: string, rawQuery: Record<string, unknown>): Promise<BacktestTop> {
    const { limit } = strictQuery(rawQuery, ['limit']);
    const parsed =
      limit === undefined ? TOP_LIMIT_MAX : /^[0-9]{1,4}$/.test(limit) ? Number(limit) : 0;
    if (!(parsed >= 1 && parsed <= TOP_LIMIT_MAX)) {
      throw new InvalidRequestError(`limit must be an integer in 1..${TOP_LIMIT_MAX}`, {
        parameter: 'limit',
        max: TOP_LIMIT_MAX,
      });
    }
    const run = await this.run(jobId, owner);
    const [stepId] = backtestStepOf(run) ?? [];
    if (stepId === undefined) return backtestTopView(run, {}, parsed);
    if (run.status === 'SUCCEEDED') {
      return backtestTopView(run, { result: await this.result(run, stepId, owner) }, parsed);
    }
    const snapshot = await this.snapshot(run.runId, stepId);
    return backtestTopView(run, snapshot === undefined ? {} : { snapshot }, parsed);
  }

  /** GET /backtests/jobs?state=&limit=&cursor=: created_at desc, then job_id desc. */
  async list(rawQuery: Record<string, unknown>, owner: string): Promise<BacktestJobPage> {
    const { state, ...rest } = strictQuery(rawQuery, ['state', 'limit', 'cursor']);
    const states = Object.values(JOB_STATE_OF_STATUS) as string[];
    if (state !== undefined && !states.includes(state)) {
      throw new InvalidRequestError(`state must be one of ${states.join(', ')}`, {
        parameter: 'state',
        allowed: states,
      });
    }
    const query = parseRunListQuery({
      ...rest,
      ...(state === undefined ? {} : { status: runStatusOfState(state as BacktestJob['state']) }),
    });
    const page = await this.store.list({ ...query, flowKey: BACKTEST_FLOW_KEY, ownerId: owner });
    return { items: page.runs.map(backtestJobView), next_cursor: page.nextCursor };
  }

  /** Idempotent: queued → cancelled at once; running → stops at the next batch boundary. */
  async cancel(jobId: string, owner: string): Promise<BacktestJob> {
    await this.run(jobId, owner);
    return backtestJobView(await this.runs.cancel(jobId, owner));
  }

  private async run(jobId: string, owner: string): Promise<FlowRun> {
    // None, or another owner's: RunsService answers 404 already.
    const run = await this.runs.get(jobId, owner);
    if (run.flowKey !== BACKTEST_FLOW_KEY) throw new BacktestJobNotFoundError(jobId);
    return run;
  }

  private async exists(owner: string, idempotencyKey: unknown): Promise<boolean> {
    if (typeof idempotencyKey !== 'string') return false; // the trigger refuses it (400)
    const page = await this.store.list({ ownerId: owner, idempotencyKey, limit: 1 });
    return page.runs.length > 0;
  }

  private async checkQuota(owner: string): Promise<void> {
    const limit = this.config.TDA_BACKTEST_MAX_ACTIVE_JOBS_PER_OWNER;
    let active = 0;
    for (const status of ACTIVE) {
      const query = { ownerId: owner, flowKey: BACKTEST_FLOW_KEY, status, limit: limit + 1 };
      active += (await this.store.list(query)).runs.length;
    }
    if (active >= limit) throw new BacktestQuotaError(owner, active, limit);
  }

  private async result(run: FlowRun, stepId: string, owner: string): Promise<BacktestResult> {
    const artifact = await this.artifacts.read(run.runId, stepId, owner);
    const checked = validate.backtestResult(JSON.parse(artifact.bytes.toString('utf8')));
    if (!checked.ok) throw new Error(`the backtest_result of run '${run.runId}' is invalid`);
    return checked.value;
  }

  private async snapshot(runId: string, stepId: string): Promise<BacktestSnapshot | undefined> {
    const doc = await this.checkpoints?.readCheckpoint(runId, stepId);
    if (doc === undefined || doc === null) return undefined;
    const checked = validate.backtestSnapshot(doc);
    // A checkpoint this version cannot read is no best-so-far (never a 500).
    return checked.ok ? checked.value : undefined;
  }
}
