import { useInfiniteQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import {
  scheduleListQuery,
  type ScheduleFireResult,
  type ScheduleView,
} from '../../api/schedules-api';
import { formatInZone, formatStrength, nextFireOf } from '../../model/schedules';
import { EmptyState } from '../../ui/empty-state';
import { ErrorPanel } from '../../ui/error-panel';
import { SkeletonBlock } from '../../ui/skeleton';
import { RelativeTime, useNow } from '../../ui/time';
import { DeleteScheduleDialog, FiredNotice, ScheduleActions } from './schedule-actions';
import { CronCell, EnabledChip, LastFire, schedulePath } from './schedule-parts';
import { ScheduleCreatePanel } from './schedule-form';

function ScheduleRows({
  schedules,
  now,
  onFired,
  onDelete,
}: {
  schedules: ScheduleView[];
  now: number;
  onFired: (result: ScheduleFireResult) => void;
  onDelete: (schedule: ScheduleView) => void;
}) {
  return (
    <div className="table-wrap">
      <table className="data-table schedules-table">
        <caption className="visually-hidden">Your schedules, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Schedule</th>
            <th scope="col">Symbol</th>
            <th scope="col">Cron</th>
            <th scope="col">State</th>
            <th scope="col">Next fire</th>
            <th scope="col">Last fire</th>
            <th scope="col">Min signal</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {schedules.map((s) => {
            const next = nextFireOf(s);
            return (
              <tr key={s.scheduleId}>
                <td data-label="Schedule" className="cell-schedule">
                  <Link to={schedulePath(s.scheduleId)} className="run-link">
                    {s.flowKey}
                  </Link>
                  <div className="muted small mono">{s.scheduleId}</div>
                  {s.description !== undefined && <div className="small">{s.description}</div>}
                </td>
                <td data-label="Symbol" className="mono">
                  {s.scope.symbol}
                </td>
                <td data-label="Cron">
                  <CronCell schedule={s} />
                </td>
                <td data-label="State">
                  <EnabledChip enabled={s.enabled} />
                </td>
                <td data-label="Next fire">
                  {next === undefined ? (
                    <span className="muted">—</span>
                  ) : (
                    <>
                      <RelativeTime iso={next} now={now} />
                      <div className="muted small">{formatInZone(next, s.timeZone)}</div>
                    </>
                  )}
                </td>
                <td data-label="Last fire">
                  <LastFire schedule={s} now={now} />
                </td>
                <td data-label="Min signal" className="num">
                  {s.minSignalStrength === undefined ? (
                    <span className="muted" title="This schedule emits no signals">
                      none
                    </span>
                  ) : (
                    formatStrength(s.minSignalStrength)
                  )}
                </td>
                <td data-label="Actions" className="cell-actions">
                  <ScheduleActions schedule={s} onFired={onFired} onDelete={onDelete} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** The owner's schedules: list with actions, and the create form (?new=1[&flow=…] opens it). */
export function SchedulesPage() {
  const navigate = useNavigate();
  const [params, setParams] = useSearchParams();
  const creating = params.get('new') === '1';
  const now = useNow(15_000);
  const [fired, setFired] = useState<ScheduleFireResult | undefined>(undefined);
  const [deleting, setDeleting] = useState<ScheduleView | undefined>(undefined);
  const list = useInfiniteQuery({ ...scheduleListQuery(), refetchInterval: 30_000 });
  const schedules = list.data?.pages.flatMap((p) => p.schedules) ?? [];
  const setCreating = (open: boolean): void => setParams(open ? { new: '1' } : {});
  return (
    <section aria-labelledby="schedules-title">
      <div className="page-head">
        <div>
          <h1 id="schedules-title">Schedules</h1>
          <p className="muted">Flows that run on a cron schedule; their runs can emit signals.</p>
        </div>
        <div className="page-head-actions">
          <Link to="/signals" className="btn">
            Signals
          </Link>
          {!creating && (
            <button
              type="button"
              className="btn btn-primary"
              aria-controls="schedule-create"
              onClick={() => setCreating(true)}
            >
              New schedule
            </button>
          )}
        </div>
      </div>
      {creating && (
        <ScheduleCreatePanel
          initialFlowKey={params.get('flow') ?? ''}
          onCreated={(s) => void navigate(schedulePath(s.scheduleId))}
          onCancel={() => setCreating(false)}
        />
      )}
      {fired !== undefined && <FiredNotice result={fired} onDone={() => setFired(undefined)} />}
      {list.isPending && <SkeletonBlock lines={5} label="Loading schedules" />}
      {list.isError && (
        <ErrorPanel
          error={list.error}
          title="The schedules could not be loaded"
          onRetry={() => void list.refetch()}
        />
      )}
      {list.isSuccess && schedules.length === 0 && !creating && (
        <EmptyState title="No schedules yet">
          <button type="button" className="btn btn-primary" onClick={() => setCreating(true)}>
            Create your first schedule
          </button>
        </EmptyState>
      )}
      {schedules.length > 0 && (
        <ScheduleRows schedules={schedules} now={now} onFired={setFired} onDelete={setDeleting} />
      )}
      {list.hasNextPage && (
        <nav className="pager" aria-label="More schedules">
          <button
            type="button"
            className="btn"
            disabled={list.isFetchingNextPage}
            onClick={() => void list.fetchNextPage()}
          >
            {list.isFetchingNextPage ? 'Loading…' : 'Show more'}
          </button>
        </nav>
      )}
      <DeleteScheduleDialog schedule={deleting} onClose={() => setDeleting(undefined)} />
    </section>
  );
}
