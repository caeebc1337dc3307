import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { toApiError } from '../../api/api-error';
import { scheduleQuery, type ScheduleFireResult, type ScheduleView } from '../../api/schedules-api';
import { formatUtc } from '../../model/format';
import { fireOutcome, formatInZone, formatStrength } from '../../model/schedules';
import { CopyButton } from '../../ui/copy-button';
import { EmptyState } from '../../ui/empty-state';
import { ErrorPanel } from '../../ui/error-panel';
import { SkeletonBlock } from '../../ui/skeleton';
import { RelativeTime, Timestamp, useNow } from '../../ui/time';
import { DeleteScheduleDialog, FiredNotice, ScheduleActions } from './schedule-actions';
import { EnabledChip } from './schedule-parts';

function scopeValue(value: unknown): string {
  if (Array.isArray(value)) return value.join(', ');
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function NextFires({ schedule, now }: { schedule: ScheduleView; now: number }) {
  const next = schedule.nextFireTimes ?? [];
  if (!schedule.enabled) {
    return (
      <p className="muted">None while paused. Resuming starts with the first slot after it.</p>
    );
  }
  if (next.length === 0) return <p className="muted">—</p>;
  return (
    <ol className="compact-list next-fires" aria-label="Next fire times">
      {next.map((at) => (
        <li key={at}>
          <strong>{formatInZone(at, schedule.timeZone)}</strong>{' '}
          <span className="muted small">
            {schedule.timeZone} · {formatUtc(at)} · <RelativeTime iso={at} now={now} />
          </span>
        </li>
      ))}
    </ol>
  );
}

function LastFireFacts({ schedule, now }: { schedule: ScheduleView; now: number }) {
  const fire = schedule.lastFire;
  if (fire === undefined) return <p className="muted">It has not fired yet.</p>;
  const { label, tone } = fireOutcome(fire);
  return (
    <dl className="facts facts-stack">
      <div className="fact">
        <dt>Outcome</dt>
        <dd>
          <span className={`badge tone-${tone}`}>{label}</span>
        </dd>
      </div>
      <div className="fact">
        <dt>Slot</dt>
        <dd>
          {formatInZone(fire.slotAt, schedule.timeZone)}{' '}
          <span className="muted small">({formatUtc(fire.slotAt)})</span>
        </dd>
      </div>
      <div className="fact">
        <dt>Decided</dt>
        <dd>
          <RelativeTime iso={fire.at} now={now} />
        </dd>
      </div>
      {fire.runId !== undefined && (
        <div className="fact">
          <dt>Run</dt>
          <dd>
            <Link className="mono small" to={`/runs/${encodeURIComponent(fire.runId)}`}>
              {fire.runId}
            </Link>
          </dd>
        </div>
      )}
      {fire.missedCount !== undefined && fire.missedCount > 0 && (
        <div className="fact">
          <dt>Older slots missed</dt>
          <dd>{fire.missedCount}</dd>
        </div>
      )}
      {fire.reason !== undefined && (
        <div className="fact">
          <dt>Reason</dt>
          <dd>{fire.reason}</dd>
        </div>
      )}
    </dl>
  );
}

function ScheduleFacts({ schedule }: { schedule: ScheduleView }) {
  const facts: [string, string][] = [
    [
      'Catch-up',
      schedule.catchUp === 'skip'
        ? 'skip (fire only a fresh slot)'
        : 'latest (fire the latest missed slot once)',
    ],
    [
      'Overlap',
      schedule.overlap === 'skip' ? 'skip while the previous run is active' : 'fire anyway',
    ],
    [
      'Min signal',
      schedule.minSignalStrength === undefined
        ? 'none (no signals)'
        : formatStrength(schedule.minSignalStrength),
    ],
    ['Owner', schedule.ownerId],
  ];
  return (
    <dl className="facts facts-inline">
      {facts.map(([label, value]) => (
        <div className="fact" key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
      <div className="fact">
        <dt>Created</dt>
        <dd>
          <Timestamp iso={schedule.createdAt} />
        </dd>
      </div>
      <div className="fact">
        <dt>Updated</dt>
        <dd>
          <Timestamp iso={schedule.updatedAt} />
        </dd>
      </div>
    </dl>
  );
}

function ScheduleDetails({ schedule, now }: { schedule: ScheduleView; now: number }) {
  const navigate = useNavigate();
  const [fired, setFired] = useState<ScheduleFireResult | undefined>(undefined);
  const [deleting, setDeleting] = useState<ScheduleView | undefined>(undefined);
  return (
    <>
      <header className="run-header">
        <div className="run-title-row">
          <div>
            <p className="eyebrow">
              <Link to="/schedules">Schedules</Link> / {schedule.flowKey}
            </p>
            <h1 className="run-title">
              {schedule.scope.symbol} <span className="muted">· {schedule.flowKey}</span>
            </h1>
            <p className="run-id">
              <span className="mono">{schedule.scheduleId}</span>{' '}
              <CopyButton text={schedule.scheduleId} label="Copy schedule id" />
            </p>
            {schedule.description !== undefined && <p>{schedule.description}</p>}
          </div>
          <div className="run-status-col">
            <EnabledChip enabled={schedule.enabled} />
          </div>
        </div>
        <div className="chips" aria-label="Schedule">
          <span className="chip mono">{schedule.cron}</span>
          <span className="chip">{schedule.timeZone}</span>
          {Object.entries(schedule.scope).map(([k, v]) => (
            <span key={k} className="chip">
              {k}: {scopeValue(v)}
            </span>
          ))}
        </div>
        <ScheduleFacts schedule={schedule} />
        <ScheduleActions schedule={schedule} onFired={setFired} onDelete={setDeleting} />
      </header>
      {fired !== undefined && <FiredNotice result={fired} onDone={() => setFired(undefined)} />}
      <div className="two-col">
        <section className="panel" aria-labelledby="next-fires-title">
          <h2 id="next-fires-title" className="panel-title">
            Next fire times
          </h2>
          <NextFires schedule={schedule} now={now} />
        </section>
        <section className="panel" aria-labelledby="last-fire-title">
          <h2 id="last-fire-title" className="panel-title">
            Last fire
          </h2>
          <LastFireFacts schedule={schedule} now={now} />
        </section>
      </div>
      {schedule.minSignalStrength !== undefined && (
        <p>
          <Link to={`/signals?symbol=${encodeURIComponent(schedule.scope.symbol)}`}>
            Signals for {schedule.scope.symbol}
          </Link>
        </p>
      )}
      <DeleteScheduleDialog
        schedule={deleting}
        onClose={() => setDeleting(undefined)}
        onDeleted={() => void navigate('/schedules')}
      />
    </>
  );
}

/** One schedule: every field, actions, the next 5 fire times and the last fire. */
export function SchedulePage() {
  const { scheduleId = '' } = useParams();
  const now = useNow(15_000);
  const schedule = useQuery({ ...scheduleQuery(scheduleId), refetchInterval: 30_000 });
  return (
    <section className="run-page schedule-page" aria-label="Schedule">
      {schedule.isPending && <SkeletonBlock lines={6} label="Loading the schedule" />}
      {schedule.isError && toApiError(schedule.error).status === 404 && (
        <EmptyState title="No such schedule">
          <p className="muted">
            <span className="mono">{scheduleId}</span> was deleted, belongs to someone else, or
            never existed.
          </p>
          <Link to="/schedules" className="btn">
            Your schedules
          </Link>
        </EmptyState>
      )}
      {schedule.isError && toApiError(schedule.error).status !== 404 && (
        <ErrorPanel
          error={schedule.error}
          title="The schedule could not be loaded"
          onRetry={() => void schedule.refetch()}
        />
      )}
      {schedule.data !== undefined && <ScheduleDetails schedule={schedule.data} now={now} />}
    </section>
  );
}
