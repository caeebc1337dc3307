import type {
  BacktestJob,
  BacktestResult,
  BacktestSnapshot,
  BacktestTop,
  FlowRun,
  FlowStep,
  RunStatus,
  Timeframe,
} from '@tda/contracts';

type JobState = BacktestJob['state'];
type Stage = NonNullable<BacktestJob['stage']>;

/** Seed 003 states ↔ run statuses, one to one (a cancel is honoured by the run at once). */
export const JOB_STATE_OF_STATUS: Readonly<Record<RunStatus, JobState>> = {
  PENDING: 'queued',
  RUNNING: 'running',
  SUCCEEDED: 'succeeded',
  FAILED: 'failed',
  CANCELLED: 'cancelled',
};

export function runStatusOfState(state: JobState): RunStatus {
  const found = Object.entries(JOB_STATE_OF_STATUS).find(([, s]) => s === state);
  return (found?.[0] ?? 'PENDING') as RunStatus;
}

const STAGES: readonly string[] = ['stage_a', 'stage_b', 'finalizing'];

/** The run's BACKTEST step (flow backtest_v1 has exactly one). */
export function backtestStepOf(run: FlowRun): [string, FlowStep] | undefined {
  return Object.entries(run.steps).find(([, step]) => step.stepType === 'BACKTEST');
}

function progressOf(step: FlowStep | undefined): Pick<BacktestJob, 'stage' | 'progress'> {
  const p = step?.progress;
  if (p === undefined || !STAGES.includes(p.stage)) return {};
  const stage = p.stage as Stage;
  return {
    stage,
    progress: {
      stage,
      processed_units: p.processedUnits ?? 0,
      total_units: p.totalUnits ?? 0,
      updated_at: p.updatedAt,
    },
  };
}

function errorOf(run: FlowRun, step: FlowStep | undefined): Partial<BacktestJob> {
  if (run.status !== 'FAILED') return {};
  const error = step?.error ?? run.error;
  if (error === undefined) return {};
  return { last_error: error.message, last_error_json: error };
}

function hashesOf(hashes: BacktestJob['hashes'] | undefined, runId: string): BacktestJob['hashes'] {
  // The flow catalogue writes them into every backtest step's inputs (validated at creation).
  if (hashes === undefined) throw new Error(`backtest run '${runId}' has no hashes in its inputs`);
  return hashes;
}

/** GET /backtests/jobs/{jobId}: the job a backtest_v1 run is. */
export function backtestJobView(run: FlowRun): BacktestJob {
  const [, step] = backtestStepOf(run) ?? [];
  const inputs = step?.inputs as { hashes?: BacktestJob['hashes'] } | undefined;
  const job: BacktestJob = {
    job_id: run.runId,
    owner_id: run.ownerId,
    state: JOB_STATE_OF_STATUS[run.status],
    ...progressOf(step),
    symbol: run.scope.symbol,
    timeframe: (run.scope['timeframe'] ?? step?.timeframe ?? '1h') as Timeframe,
    request: { ...run.scope },
    hashes: hashesOf(inputs?.hashes, run.runId),
    created_at: run.createdAt,
    ...errorOf(run, step),
  };
  if (run.scope.asOf !== undefined) job.as_of = run.scope.asOf;
  if (run.startedAt !== undefined) job.started_at = run.startedAt;
  if (run.finishedAt !== undefined) job.finished_at = run.finishedAt;
  if (run.cancelRequestedAt !== undefined) job.cancel_requested_at = run.cancelRequestedAt;
  return job;
}

/**
 * GET /backtests/jobs/{jobId}/top (seed 003 output policy): a succeeded job's result (report
 * tables for every persisted variant, trades only where the result kept them); otherwise the
 * best-so-far checkpoint, without report tables or trades; nothing yet → source none.
 */
export function backtestTopView(
  run: FlowRun,
  found: { result?: BacktestResult; snapshot?: BacktestSnapshot },
  limit: number,
): BacktestTop {
  const base = { job_id: run.runId, state: JOB_STATE_OF_STATUS[run.status] };
  if (found.result !== undefined) {
    const items = found.result.top.slice(0, limit).map(({ trades, ...variant }) => ({
      ...variant,
      ...(trades === null ? {} : { trades }),
    }));
    return { ...base, source: 'result', items };
  }
  const { snapshot } = found;
  if (snapshot === undefined) return { ...base, source: 'none', items: [] };
  return {
    ...base,
    source: 'best_so_far',
    stage: snapshot.stage,
    processed_units: snapshot.processedUnits,
    total_units: snapshot.totalUnits,
    items: snapshot.top.slice(0, limit).map((variant, i) => ({ rank: i + 1, ...variant })),
  };
}
