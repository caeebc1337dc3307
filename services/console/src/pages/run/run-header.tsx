import { Link } from 'react-router';
import type { RunDocument } from '../../api/api-types';
import type { StreamState } from '../../live/event-stream';
import { durationBetween, formatDuration, formatUtc } from '../../model/format';
import { isTerminalRun } from '../../model/status';
import { CopyButton } from '../../ui/copy-button';
import { LiveIndicator } from '../../ui/live-indicator';
import { RunStatusBadge } from '../../ui/status-badge';
import { Timestamp } from '../../ui/time';
import { RunScheduleFacts } from './run-schedule-facts';

function rerunOf(run: RunDocument): string | undefined {
  const source = run.trigger['rerunOf'];
  if (typeof source !== 'object' || source === null) return undefined;
  const runId = (source as Record<string, unknown>)['runId'];
  return typeof runId === 'string' ? runId : undefined;
}

export function RunHeader({
  run,
  stream,
  now,
}: {
  run: RunDocument;
  stream: StreamState;
  now: number;
}) {
  const scope = run.scope;
  const source = rerunOf(run);
  const extraScope = Object.entries(scope).filter(
    ([k]) => !['symbol', 'asOf', 'timeframes', 'accountId'].includes(k),
  );
  const end = isTerminalRun(run.status) ? (run.finishedAt ?? run.updatedAt) : undefined;
  return (
    <header className="run-header">
      <div className="run-title-row">
        <div>
          <p className="eyebrow">
            <Link to="/">Runs</Link> / {run.flowKey}
          </p>
          <h1 className="run-title">
            {scope.symbol} <span className="muted">· {run.flowKey}</span>
          </h1>
          <p className="run-id">
            <span className="mono">{run.runId}</span>{' '}
            <CopyButton text={run.runId} label="Copy run id" />
          </p>
        </div>
        <div className="run-status-col">
          <RunStatusBadge status={run.status} />
          <LiveIndicator state={stream} />
        </div>
      </div>
      <div className="chips" aria-label="Scope">
        {scope.timeframes?.map((tf) => (
          <span key={tf} className="chip">
            {tf}
          </span>
        ))}
        <span className="chip" title="The market moment this run analyses">
          as of {formatUtc(scope.asOf)}
        </span>
        {scope.accountId !== undefined && <span className="chip">account {scope.accountId}</span>}
        {extraScope.map(([k, v]) => (
          <span key={k} className="chip">
            {k}: {typeof v === 'string' ? v : JSON.stringify(v)}
          </span>
        ))}
      </div>
      <dl className="facts facts-inline">
        <div className="fact">
          <dt>Created</dt>
          <dd>
            <Timestamp iso={run.createdAt} />
          </dd>
        </div>
        <div className="fact">
          <dt>Started</dt>
          <dd>
            <Timestamp iso={run.startedAt} />
          </dd>
        </div>
        <div className="fact">
          <dt>Finished</dt>
          <dd>
            <Timestamp iso={run.finishedAt} />
          </dd>
        </div>
        <div className="fact">
          <dt>Duration</dt>
          <dd>{formatDuration(durationBetween(run.startedAt ?? run.createdAt, end, now))}</dd>
        </div>
        <div className="fact">
          <dt>Owner</dt>
          <dd>{run.ownerId}</dd>
        </div>
        <div className="fact">
          <dt>Trigger</dt>
          <dd>
            {run.trigger.type.toLowerCase()}{' '}
            <span className="muted small">{run.trigger.source}</span>
          </dd>
        </div>
        <RunScheduleFacts run={run} />
        {source !== undefined && (
          <div className="fact">
            <dt>Rerun of</dt>
            <dd>
              <Link className="mono small" to={`/runs/${encodeURIComponent(source)}`}>
                {source}
              </Link>
            </dd>
          </div>
        )}
      </dl>
      {run.error !== undefined && (
        <div className="error-panel" role="note">
          <p className="error-line">
            <code className="error-code">{run.error.code}</code>: {run.error.message}
          </p>
        </div>
      )}
    </header>
  );
}
