import { useInfiniteQuery } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';
import {
  backtestJobsQuery,
  type BacktestJob,
  type BacktestJobState,
} from '../../api/backtests-api';
import { JOB_STATES, jobRow, jobStateLabel, pollWhileActive } from '../../model/backtests';
import { EmptyState } from '../../ui/empty-state';
import { ErrorPanel } from '../../ui/error-panel';
import { SkeletonBlock } from '../../ui/skeleton';
import { RelativeTime, useNow } from '../../ui/time';
import { backtestPath, JobStateBadge, MiniProgress } from './backtest-parts';

function JobRows({ jobs, now }: { jobs: BacktestJob[]; now: number }) {
  return (
    <div className="table-wrap">
      <table className="data-table backtests-table">
        <caption className="visually-hidden">Your backtest jobs, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Job</th>
            <th scope="col">Market</th>
            <th scope="col">Strategy</th>
            <th scope="col">State</th>
            <th scope="col">Stage</th>
            <th scope="col">Progress</th>
            <th scope="col" className="num">
              Variants
            </th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {jobs.map((job) => {
            const row = jobRow(job);
            return (
              <tr key={row.jobId}>
                <td data-label="Job" className="cell-job">
                  <Link to={backtestPath(row.jobId)} className="run-link mono">
                    {row.jobId}
                  </Link>
                </td>
                <td data-label="Market">
                  <span className="mono">{row.symbol}</span>{' '}
                  <span className="muted">{row.timeframe}</span>
                </td>
                <td data-label="Strategy">{row.strategy}</td>
                <td data-label="State">
                  <JobStateBadge state={row.state} />
                </td>
                <td data-label="Stage">{row.stage}</td>
                <td data-label="Progress">
                  <MiniProgress
                    percent={row.percent}
                    title={row.units === '' ? row.stage : `${row.stage}: ${row.units}`}
                  />
                </td>
                <td data-label="Variants" className="num">
                  {row.variants}
                </td>
                <td data-label="Created">
                  <RelativeTime iso={row.createdAt} now={now} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

function StateFilter({
  state,
  onChange,
}: {
  state: BacktestJobState | '';
  onChange: (state: BacktestJobState | '') => void;
}) {
  return (
    <form
      className="filters backtests-filters"
      role="search"
      aria-label="Filter backtest jobs"
      onSubmit={(e) => e.preventDefault()}
    >
      <label className="field">
        <span className="field-label">State</span>
        <select value={state} onChange={(e) => onChange(e.target.value as BacktestJobState | '')}>
          <option value="">Any state</option>
          {JOB_STATES.map((s) => (
            <option key={s} value={s}>
              {jobStateLabel(s)}
            </option>
          ))}
        </select>
      </label>
    </form>
  );
}

const stateParam = (value: string | null): BacktestJobState | '' =>
  (JOB_STATES as readonly string[]).includes(value ?? '') ? (value as BacktestJobState) : '';

/** The owner's backtest jobs, newest first; polled every 2 s while one is queued or running. */
export function BacktestsPage() {
  const [params, setParams] = useSearchParams();
  const state = stateParam(params.get('state'));
  const now = useNow(15_000);
  const list = useInfiniteQuery({
    ...backtestJobsQuery(state),
    refetchInterval: (q) =>
      pollWhileActive(q.state.data?.pages.flatMap((p) => p.items.map((j) => j.state)) ?? []),
  });
  const jobs = list.data?.pages.flatMap((p) => p.items) ?? [];
  return (
    <section aria-labelledby="backtests-title">
      <div className="page-head">
        <div>
          <h1 id="backtests-title">Backtests</h1>
          <p className="muted">
            Parameter grids run over historical candles; the best variants with their metrics,
            report tables and trades.
          </p>
        </div>
      </div>
      <StateFilter state={state} onChange={(s) => setParams(s === '' ? {} : { state: s })} />
      {list.isPending && <SkeletonBlock lines={5} label="Loading backtest jobs" />}
      {list.isError && (
        <ErrorPanel
          error={list.error}
          title="The backtest jobs could not be loaded"
          onRetry={() => void list.refetch()}
        />
      )}
      {list.isSuccess && jobs.length === 0 && (
        <EmptyState title={state === '' ? 'No backtest jobs yet' : `No ${state} backtest jobs`}>
          <p className="muted">
            Start one with <code className="mono">tda backtest run</code> or{' '}
            <code className="mono">POST /backtests/jobs</code>.
          </p>
        </EmptyState>
      )}
      {jobs.length > 0 && <JobRows jobs={jobs} now={now} />}
      {list.hasNextPage && (
        <nav className="pager" aria-label="More backtest jobs">
          <button
            type="button"
            className="btn"
            disabled={list.isFetchingNextPage}
            onClick={() => void list.fetchNextPage()}
          >
            {list.isFetchingNextPage ? 'Loading…' : 'Load more'}
          </button>
        </nav>
      )}
    </section>
  );
}
