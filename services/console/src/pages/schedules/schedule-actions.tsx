import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router';
import {
  scheduleKeys,
  schedulesApi,
  type ScheduleFireResult,
  type ScheduleView,
} from '../../api/schedules-api';
import { formatUtc } from '../../model/format';
import { ConfirmDialog } from '../../ui/confirm-dialog';
import { ErrorPanel } from '../../ui/error-panel';

interface ScheduleActionsProps {
  schedule: ScheduleView;
  onFired: (result: ScheduleFireResult) => void;
  /** Asks to delete: the page holds the one confirmation dialog. */
  onDelete: (schedule: ScheduleView) => void;
}

/**
 * Pause / resume, fire now and delete of one schedule. Every button is named after the schedule
 * for assistive technology and the browser tests ("Pause schedule sch_…").
 */
export function ScheduleActions({ schedule, onFired, onDelete }: ScheduleActionsProps) {
  const queryClient = useQueryClient();
  const id = schedule.scheduleId;
  const refresh = (): void => void queryClient.invalidateQueries({ queryKey: scheduleKeys.all });
  const state = useMutation({
    mutationFn: (action: 'pause' | 'resume') => schedulesApi.setState(id, action),
    onSuccess: (view) => {
      queryClient.setQueryData(scheduleKeys.one(id), view);
      refresh();
    },
  });
  const fire = useMutation({
    mutationFn: () => schedulesApi.fire(id),
    onSuccess: (result) => {
      onFired(result);
      refresh();
    },
  });
  const busy = state.isPending || fire.isPending;
  const failed = state.isError ? state.error : fire.isError ? fire.error : undefined;
  return (
    <div className="schedule-actions">
      <div className="schedule-buttons" role="group" aria-label={`Actions of schedule ${id}`}>
        <button
          type="button"
          className="btn btn-small"
          disabled={busy}
          aria-label={`${schedule.enabled ? 'Pause' : 'Resume'} schedule ${id}`}
          onClick={() => state.mutate(schedule.enabled ? 'pause' : 'resume')}
        >
          {schedule.enabled ? 'Pause' : 'Resume'}
        </button>
        <button
          type="button"
          className="btn btn-small"
          disabled={busy}
          aria-label={`Fire schedule ${id} now`}
          title="Run it now (this minute's slot): one run per slot"
          onClick={() => fire.mutate()}
        >
          {fire.isPending ? 'Firing…' : 'Fire now'}
        </button>
        <button
          type="button"
          className="btn btn-small btn-danger-outline"
          disabled={busy}
          aria-label={`Delete schedule ${id}`}
          onClick={() => onDelete(schedule)}
        >
          Delete
        </button>
      </div>
      {failed !== undefined && <ErrorPanel error={failed} title="That did not work" />}
    </div>
  );
}

/** The confirmation of a delete (one per page: the dialog's title id is unique). */
export function DeleteScheduleDialog({
  schedule,
  onClose,
  onDeleted,
}: {
  schedule: ScheduleView | undefined;
  onClose: () => void;
  onDeleted?: () => void;
}) {
  const queryClient = useQueryClient();
  const remove = useMutation({
    mutationFn: (scheduleId: string) => schedulesApi.remove(scheduleId),
    onSuccess: (_, scheduleId) => {
      queryClient.removeQueries({ queryKey: scheduleKeys.one(scheduleId) });
      void queryClient.invalidateQueries({ queryKey: scheduleKeys.all });
      onClose();
      onDeleted?.();
    },
  });
  return (
    <ConfirmDialog
      open={schedule !== undefined}
      title="Delete this schedule?"
      confirmLabel="Delete"
      danger
      busy={remove.isPending}
      onCancel={() => (remove.reset(), onClose())}
      onConfirm={() => schedule !== undefined && remove.mutate(schedule.scheduleId)}
    >
      {schedule !== undefined && (
        <p>
          <strong>
            {schedule.flowKey} · {schedule.scope.symbol}
          </strong>{' '}
          (<span className="mono">{schedule.cron}</span>, {schedule.timeZone}) stops firing. Its
          runs and signals stay. This cannot be undone.
        </p>
      )}
      {remove.isError && <ErrorPanel error={remove.error} title="Not deleted" />}
    </ConfirmDialog>
  );
}

/** What "Fire now" did: the slot and a link to its run. */
export function FiredNotice({
  result,
  onDone,
}: {
  result: ScheduleFireResult;
  onDone: () => void;
}) {
  return (
    <div className="notice notice-success" role="status">
      <span>
        {result.created ? 'Fired' : 'Already fired'} slot {formatUtc(result.slotAt)} of{' '}
        <span className="mono">{result.scheduleId}</span>:{' '}
        <Link className="mono" to={`/runs/${encodeURIComponent(result.runId)}`}>
          run {result.runId}
        </Link>
      </span>{' '}
      <button type="button" className="btn btn-small btn-ghost" onClick={onDone}>
        Dismiss
      </button>
    </div>
  );
}
