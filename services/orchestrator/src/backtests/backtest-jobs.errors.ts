import { OrchestratorError } from '../orchestrator.errors';

/** Not a backtest job of the request owner (another owner's, another flow's run, none): 404. */
export class BacktestJobNotFoundError extends OrchestratorError {
  constructor(jobId: string) {
    super('NOT_FOUND', `no backtest job '${jobId}'`, { jobId });
  }
}

/**
 * Seed 003 `max_active_jobs_per_user` (active = queued + running) reached: 429, nothing created.
 * Retryable: it succeeds once a job ends.
 */
export class BacktestQuotaError extends OrchestratorError {
  constructor(ownerId: string, active: number, limit: number) {
    super(
      'QUOTA_EXCEEDED',
      `owner '${ownerId}' already has ${String(active)} active backtest jobs (queued or running); TDA_BACKTEST_MAX_ACTIVE_JOBS_PER_OWNER allows ${String(limit)}. Wait for one to finish or cancel one.`,
      { ownerId, active, limit },
    );
  }
}
