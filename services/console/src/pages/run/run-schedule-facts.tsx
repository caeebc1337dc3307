import { Link } from 'react-router';
import type { RunDocument } from '../../api/api-types';
import { formatUtc } from '../../model/format';
import { signalDecision } from '../../model/schedules';

/**
 * Flow 7 in the run header: the schedule that fired the run (and its slot), and once the run has
 * finished, what its recommendation meant for the schedule's signal filter.
 */
export function RunScheduleFacts({ run }: { run: RunDocument }) {
  const { scheduleId, slotAt } = run.trigger;
  const signal = run.signal === undefined ? undefined : signalDecision(run.signal);
  return (
    <>
      {scheduleId !== undefined && (
        <div className="fact">
          <dt>Schedule</dt>
          <dd>
            <Link className="mono small" to={`/schedules/${encodeURIComponent(scheduleId)}`}>
              {scheduleId}
            </Link>
            {slotAt !== undefined && <div className="muted small">slot {formatUtc(slotAt)}</div>}
          </dd>
        </div>
      )}
      {signal !== undefined && (
        <div className="fact">
          <dt>Signal</dt>
          <dd className="run-signal">
            <span className={`badge tone-${signal.tone}`}>{signal.label}</span>{' '}
            <span className="muted small">{signal.detail}</span>
            {run.signal?.status === 'emitted' && (
              <div className="small">
                <Link to={`/signals?symbol=${encodeURIComponent(run.scope.symbol)}`}>
                  Signals for {run.scope.symbol}
                </Link>
              </div>
            )}
          </dd>
        </div>
      )}
    </>
  );
}
