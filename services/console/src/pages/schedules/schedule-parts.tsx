import { Link } from 'react-router';
import type { ScheduleView } from '../../api/schedules-api';
import { fireOutcome } from '../../model/schedules';
import { RelativeTime } from '../../ui/time';

/* Small pieces the schedules list and the schedule page share. */

export const schedulePath = (scheduleId: string): string =>
  `/schedules/${encodeURIComponent(scheduleId)}`;

/** "0 8 * * 1-5" and its zone. */
export function CronCell({ schedule }: { schedule: ScheduleView }) {
  return (
    <>
      <code className="mono">{schedule.cron}</code>
      <div className="muted small">{schedule.timeZone}</div>
    </>
  );
}

export function EnabledChip({ enabled }: { enabled: boolean }) {
  return enabled ? (
    <span className="badge tone-success">
      <span className="badge-dot" aria-hidden="true" />
      Enabled
    </span>
  ) : (
    <span className="badge tone-stopped">
      <span className="badge-dot" aria-hidden="true" />
      Paused
    </span>
  );
}

export function LastFire({ schedule, now }: { schedule: ScheduleView; now: number }) {
  const fire = schedule.lastFire;
  if (fire === undefined) return <span className="muted">never</span>;
  const { label, tone } = fireOutcome(fire);
  return (
    <>
      <span className={`badge tone-${tone}`} title={fire.reason}>
        {label}
      </span>
      <div className="muted small">
        slot <RelativeTime iso={fire.slotAt} now={now} />
        {fire.runId !== undefined && (
          <>
            {' · '}
            <Link to={`/runs/${encodeURIComponent(fire.runId)}`}>run</Link>
          </>
        )}
      </div>
    </>
  );
}
