import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { toApiError } from '../../api/api-error';
import {
  backtestJobQuery,
  backtestKeys,
  backtestsApi,
  backtestTopQuery,
  type BacktestJob,
  type BacktestTop,
} from '../../api/backtests-api';
import {
  isTerminalJob,
  JOBS_POLL_MS,
  rememberStages,
  stageBars,
  strategyOf,
  variantCounts,
  formatCount,
  type StageMemory,
} from '../../model/backtests';
import { durationBetween, formatDuration, formatUtc } from '../../model/format';
import { ConfirmDialog } from '../../ui/confirm-dialog';
import { CopyButton } from '../../ui/copy-button';
import { EmptyState } from '../../ui/empty-state';
import { ErrorPanel } from '../../ui/error-panel';
import { SkeletonBlock } from '../../ui/skeleton';
import { Timestamp, useNow } from '../../ui/time';
import { JobStateBadge, StageProgress } from './backtest-parts';
import { TopTable } from './backtest-top';

const HASHES = ['request_hash', 'engine_params_hash', 'backtest_runtime_config_hash'] as const;

function HashFacts({ job }: { job: BacktestJob }) {
  return (
    <dl className="facts facts-stack hashes" aria-label="Hashes">
      {HASHES.map((name) => (
        <div className="fact" key={name}>
          <dt className="mono">{name}</dt>
          <dd className="hash-value">
            <code className="mono small" title={job.hashes[name]}>
              {job.hashes[name]}
            </code>
            <CopyButton text={job.hashes[name]} name={`Copy ${name}`} />
          </dd>
        </div>
      ))}
    </dl>
  );
}

function RequestChips({ job }: { job: BacktestJob }) {
  const request = job.request;
  const counts = variantCounts(request);
  const chip = (key: string, label: string) =>
    request[key] === undefined ? null : (
      <span className="chip">
        {label} {String(request[key])}
      </span>
    );
  return (
    <div className="chips" aria-label="Request">
      {chip('bars', 'bars')}
      {counts !== undefined && (
        <span className="chip" title="Base variants (stage A) × execution combinations">
          {formatCount(counts.base)} × {formatCount(counts.execution)} = {formatCount(counts.total)}{' '}
          variants
        </span>
      )}
      {chip('preselect', 'preselect')}
      {chip('top_k', 'top_k')}
      {chip('top_trades_n', 'top_trades_n')}
      {job.as_of !== undefined && (
        <span className="chip" title="No candle after this moment was used">
          as of {formatUtc(job.as_of)}
        </span>
      )}
    </div>
  );
}

function TimeFacts({ job, now }: { job: BacktestJob; now: number }) {
  const ran = durationBetween(job.started_at, job.finished_at, now);
  return (
    <dl className="facts facts-inline">
      <div className="fact">
        <dt>Created</dt>
        <dd>
          <Timestamp iso={job.created_at} />
        </dd>
      </div>
      <div className="fact">
        <dt>Started</dt>
        <dd>
          <Timestamp iso={job.started_at} />
        </dd>
      </div>
      <div className="fact">
        <dt>Finished</dt>
        <dd>
          <Timestamp iso={job.finished_at} />
        </dd>
      </div>
      <div className="fact">
        <dt>{job.finished_at === undefined ? 'Running for' : 'Took'}</dt>
        <dd>{formatDuration(ran)}</dd>
      </div>
      {job.cancel_requested_at !== undefined && (
        <div className="fact">
          <dt>Cancel requested</dt>
          <dd>
            <Timestamp iso={job.cancel_requested_at} />
          </dd>
        </div>
      )}
    </dl>
  );
}

function CancelJob({ job }: { job: BacktestJob }) {
  const queryClient = useQueryClient();
  const [asking, setAsking] = useState(false);
  const cancel = useMutation({
    mutationFn: () => backtestsApi.cancel(job.job_id),
    onSuccess: (updated) => {
      queryClient.setQueryData(backtestKeys.job(job.job_id), updated);
      void queryClient.invalidateQueries({ queryKey: backtestKeys.all });
      setAsking(false);
    },
  });
  if (isTerminalJob(job.state)) return null;
  const requested = job.cancel_requested_at !== undefined;
  return (
    <>
      <div className="action-bar" role="group" aria-label="Job actions">
        <button
          type="button"
          className="btn btn-small btn-danger-outline"
          disabled={requested || cancel.isPending}
          onClick={() => setAsking(true)}
        >
          {requested ? 'Cancelling…' : 'Cancel job'}
        </button>
      </div>
      <ConfirmDialog
        open={asking}
        title="Cancel this backtest job?"
        confirmLabel="Cancel job"
        danger
        busy={cancel.isPending}
        onCancel={() => (cancel.reset(), setAsking(false))}
        onConfirm={() => cancel.mutate()}
      >
        <p>
          {job.state === 'queued'
            ? 'It has not started: it is cancelled at once.'
            : 'It stops at the next batch boundary; the best variants so far stay visible, no report tables or trades are written.'}
        </p>
        {cancel.isError && <ErrorPanel error={cancel.error} title="Not cancelled" />}
      </ConfirmDialog>
    </>
  );
}

function JobHeader({ job, now }: { job: BacktestJob; now: number }) {
  return (
    <header className="run-header">
      <div className="run-title-row">
        <div>
          <p className="eyebrow">
            <Link to="/backtests">Backtests</Link> / {strategyOf(job.request)}
          </p>
          <h1 className="run-title">
            {job.symbol} <span className="muted">· {job.timeframe}</span>{' '}
            <span className="muted">· {strategyOf(job.request)}</span>
          </h1>
          <p className="run-id">
            <span className="mono">{job.job_id}</span>{' '}
            <CopyButton text={job.job_id} label="Copy job id" />
          </p>
        </div>
        <div className="run-status-col">
          <JobStateBadge state={job.state} />
          <CancelJob job={job} />
        </div>
      </div>
      <RequestChips job={job} />
      <TimeFacts job={job} now={now} />
      {job.state === 'failed' && (
        <div className="error-panel" role="alert">
          <div className="error-panel-head">
            <strong>The job failed</strong>
          </div>
          <p className="error-line">
            {job.last_error_json !== undefined && (
              <>
                <code className="error-code">{job.last_error_json.code}</code>:{' '}
              </>
            )}
            {job.last_error ?? 'no error message'}
          </p>
        </div>
      )}
      <HashFacts job={job} />
    </header>
  );
}

const TOP_TITLES: Readonly<Record<BacktestTop['source'], string>> = {
  result: 'Result',
  best_so_far: 'Best so far',
  none: 'Nothing yet',
};

function TopPanel({ job, top }: { job: BacktestJob; top: BacktestTop | undefined }) {
  const running = !isTerminalJob(job.state);
  return (
    <section className="panel" aria-labelledby="top-title">
      <div className="panel-head">
        <h2 id="top-title" className="panel-title">
          Top variants
        </h2>
        {top !== undefined && top.source !== 'none' && (
          <span className={`chip ${top.source === 'result' ? 'chip-success' : 'chip-warning'}`}>
            {TOP_TITLES[top.source]}
            {top.source === 'best_so_far' && running ? ' (updating)' : ''}
          </span>
        )}
      </div>
      {top === undefined && <SkeletonBlock lines={4} label="Loading the top variants" />}
      {top !== undefined && top.items.length === 0 && (
        <p className="muted">
          {running
            ? 'No ranked variants yet: stage B ranks them, stage A shortlists the base variants first.'
            : 'This job ranked no variants.'}
        </p>
      )}
      {top !== undefined && top.source === 'best_so_far' && top.items.length > 0 && (
        <p className="muted small">
          {running
            ? 'The best variants so far, by total return. Report tables and trades come with the result.'
            : `The last best-so-far of a ${job.state} job: it has no report tables or trades.`}
        </p>
      )}
      {top !== undefined && top.items.length > 0 && <TopTable top={top} />}
    </section>
  );
}

function JobDetails({ job, now }: { job: BacktestJob; now: number }) {
  // The job shows only its current stage's counts: keep those of earlier stages seen while polling
  // (state adjusted during render when a new job answer arrives, React's pattern for derived state).
  const [seen, setSeen] = useState<{ job: BacktestJob; memory: StageMemory }>(() => ({
    job,
    memory: rememberStages({}, job),
  }));
  if (seen.job !== job) setSeen({ job, memory: rememberStages(seen.memory, job) });
  const terminal = isTerminalJob(job.state);
  const top = useQuery({
    ...backtestTopQuery(job.job_id, job.state),
    refetchInterval: terminal ? false : JOBS_POLL_MS,
  });
  return (
    <>
      <JobHeader job={job} now={now} />
      <section className="panel" aria-labelledby="stages-title">
        <h2 id="stages-title" className="panel-title">
          Progress
        </h2>
        <StageProgress bars={stageBars(job, seen.memory)} />
      </section>
      {top.isError ? (
        <ErrorPanel
          error={top.error}
          title="The top variants could not be loaded"
          onRetry={() => void top.refetch()}
        />
      ) : (
        <TopPanel job={job} top={top.data} />
      )}
    </>
  );
}

/** One backtest job: state, stage bars, hashes, cancel, and its top variants; polled until done. */
export function BacktestJobPage() {
  const { jobId = '' } = useParams();
  const job = useQuery({
    ...backtestJobQuery(jobId),
    refetchInterval: (q) =>
      q.state.data !== undefined && isTerminalJob(q.state.data.state) ? false : JOBS_POLL_MS,
  });
  const now = useNow(1000, job.data !== undefined && !isTerminalJob(job.data.state));
  return (
    <section className="run-page backtest-page" aria-label="Backtest job">
      {job.isPending && <SkeletonBlock lines={8} label="Loading the backtest job" />}
      {job.isError && toApiError(job.error).status === 404 && (
        <EmptyState title="No such backtest job">
          <p className="muted">
            <span className="mono">{jobId}</span> belongs to someone else or never existed.
          </p>
          <Link to="/backtests" className="btn">
            Your backtests
          </Link>
        </EmptyState>
      )}
      {job.isError && toApiError(job.error).status !== 404 && (
        <ErrorPanel
          error={job.error}
          title="The backtest job could not be loaded"
          onRetry={() => void job.refetch()}
        />
      )}
      {job.data !== undefined && <JobDetails job={job.data} now={now} />}
    </section>
  );
}
