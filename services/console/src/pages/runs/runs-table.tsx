import { Link } from 'react-router';
import type { ApiFlowRun } from '../../api/api-types';
import { toRunDocument } from '../../api/api-types';
import { durationBetween, formatDuration } from '../../model/format';
import { isTerminalRun } from '../../model/status';
import { RunStatusBadge } from '../../ui/status-badge';
import { RelativeTime } from '../../ui/time';

function Progress({ run }: { run: ApiFlowRun }) {
  const doc = toRunDocument(run);
  const steps = Object.values(doc.steps);
  const total = doc.progress?.total ?? steps.length;
  const done =
    doc.progress === undefined
      ? steps.filter((s) => s.status === 'SUCCEEDED' || s.status === 'SKIPPED').length
      : doc.progress.succeeded + doc.progress.skipped;
  const pct = total === 0 ? 0 : Math.round((done / total) * 100);
  return (
    <span className="progress" title={`${done} of ${total} steps done`}>
      <span className="progress-track" aria-hidden="true">
        <span
          className={`progress-fill${doc.progress?.failed ? ' has-failed' : ''}`}
          style={{ width: `${pct}%` }}
        />
      </span>
      <span className="progress-text">
        {done}/{total}
      </span>
    </span>
  );
}

/** The runs of one page: a table on wide screens, cards on a phone (same markup, CSS). */
export function RunsTable({ runs, now }: { runs: ApiFlowRun[]; now: number }) {
  return (
    <div className="table-wrap">
      <table className="runs-table">
        <caption className="visually-hidden">Runs, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Status</th>
            <th scope="col">Run</th>
            <th scope="col">Flow</th>
            <th scope="col">Symbol</th>
            <th scope="col">Created</th>
            <th scope="col">Duration</th>
            <th scope="col">Progress</th>
            <th scope="col">Owner</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((run) => {
            const doc = toRunDocument(run);
            const end = isTerminalRun(run.status) ? (run.finishedAt ?? run.updatedAt) : undefined;
            return (
              <tr key={run.runId}>
                <td data-label="Status">
                  <RunStatusBadge status={run.status} />
                </td>
                <td data-label="Run" className="cell-run">
                  <Link to={`/runs/${encodeURIComponent(run.runId)}`} className="run-link mono">
                    {run.runId}
                  </Link>
                </td>
                <td data-label="Flow">{run.flowKey}</td>
                <td data-label="Symbol" className="mono">
                  {doc.scope.symbol}
                </td>
                <td data-label="Created">
                  <RelativeTime iso={run.createdAt} now={now} />
                </td>
                <td data-label="Duration" className="num">
                  {formatDuration(durationBetween(run.startedAt ?? run.createdAt, end, now))}
                </td>
                <td data-label="Progress">
                  <Progress run={run} />
                </td>
                <td data-label="Owner" className="muted">
                  {run.ownerId}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

export function RunsTableSkeleton() {
  return (
    <div className="table-wrap" role="status" aria-label="Loading runs">
      <table className="runs-table">
        <tbody>
          {Array.from({ length: 6 }, (_, i) => (
            <tr key={i} className="skeleton-row">
              {Array.from({ length: 8 }, (__, j) => (
                <td key={j}>
                  <span
                    className="skeleton"
                    style={{ width: `${50 + ((i * 7 + j * 13) % 45)}%` }}
                  />
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
