import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import type { ApiFlowRun, RunDocument } from '../../api/api-types';
import { api, unwrap } from '../../api/client';
import { queryKeys } from '../../api/queries';
import { downstreamOf, topologicalOrder } from '../../model/dag';
import { isTerminalRun } from '../../model/status';
import { ConfirmDialog } from '../../ui/confirm-dialog';
import { ErrorPanel } from '../../ui/error-panel';

export type RunAction =
  | { kind: 'cancel' }
  | { kind: 'retry-run' }
  | { kind: 'retry-step'; stepId: string }
  | { kind: 'rerun'; stepId: string };

async function perform(runId: string, action: RunAction): Promise<ApiFlowRun> {
  const path = { runId };
  switch (action.kind) {
    case 'cancel':
      return unwrap(api.POST('/runs/{runId}/cancel', { params: { path } }));
    case 'retry-run':
      return unwrap(api.POST('/runs/{runId}/retry', { params: { path } }));
    case 'retry-step':
      return unwrap(
        api.POST('/runs/{runId}/steps/{stepId}/retry', {
          params: { path: { runId, stepId: action.stepId } },
        }),
      );
    case 'rerun':
      return unwrap(
        api.POST('/runs/{runId}/rerun', { params: { path }, body: { fromStepId: action.stepId } }),
      );
  }
}

const TITLES: Record<RunAction['kind'], { title: string; confirm: string }> = {
  cancel: { title: 'Cancel this run?', confirm: 'Cancel run' },
  'retry-run': { title: 'Retry the failed steps?', confirm: 'Retry failed steps' },
  'retry-step': { title: 'Retry this step?', confirm: 'Retry step' },
  rerun: { title: 'Rerun from a step?', confirm: 'Start the new run' },
};

function RerunBody({
  run,
  stepId,
  onStep,
}: {
  run: RunDocument;
  stepId: string;
  onStep: (id: string) => void;
}) {
  const again = [stepId, ...downstreamOf(run.steps, stepId)];
  const reused = Object.keys(run.steps).length - again.length;
  return (
    <>
      <label className="field">
        <span className="field-label">Rerun from</span>
        <select value={stepId} onChange={(e) => onStep(e.target.value)}>
          {topologicalOrder(run.steps).map((id) => (
            <option key={id} value={id}>
              {id}
            </option>
          ))}
        </select>
      </label>
      <p>
        A <strong>new run</strong> executes {again.length} step{again.length === 1 ? '' : 's'} again
        and reuses the artifacts of the other {reused}. This run is left as it is.
      </p>
      <ul className="compact-list mono small">
        {again.map((id) => (
          <li key={id}>{id}</li>
        ))}
      </ul>
    </>
  );
}

function Explanation({ action, run }: { action: RunAction; run: RunDocument }) {
  switch (action.kind) {
    case 'cancel':
      return (
        <p>
          Queued and ready steps are cancelled now; running steps stop at their next heartbeat. A
          cancelled run cannot be retried, only rerun.
        </p>
      );
    case 'retry-run': {
      const failed = Object.entries(run.steps)
        .filter(([, s]) => s.status === 'FAILED')
        .map(([id]) => id);
      return (
        <p>
          {failed.length} failed step{failed.length === 1 ? '' : 's'} ({failed.join(', ')}) and the
          steps the failure cancelled run again in this run.
        </p>
      );
    }
    case 'retry-step':
      return (
        <p>
          <span className="mono">{action.stepId}</span> runs again in this run, starting from
          attempt 1; the steps the failure cancelled are re-opened too.
        </p>
      );
    case 'rerun':
      return null;
  }
}

/** The run's action buttons and their confirmation dialogs. */
export function useRunActions(run: RunDocument) {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const [action, setAction] = useState<RunAction | null>(null);
  const mutation = useMutation({
    mutationFn: (a: RunAction) => perform(run.runId, a),
    onSuccess: (result, a) => {
      setAction(null);
      void queryClient.invalidateQueries({ queryKey: queryKeys.run(run.runId) });
      void queryClient.invalidateQueries({ queryKey: queryKeys.runs });
      if (a.kind === 'rerun') void navigate(`/runs/${encodeURIComponent(result.runId)}`);
    },
  });
  const open = (next: RunAction): void => {
    mutation.reset();
    setAction(next);
  };
  const dialog =
    action === null ? null : (
      <ConfirmDialog
        open
        title={TITLES[action.kind].title}
        confirmLabel={TITLES[action.kind].confirm}
        danger={action.kind === 'cancel'}
        busy={mutation.isPending}
        onCancel={() => setAction(null)}
        onConfirm={() => mutation.mutate(action)}
      >
        {action.kind === 'rerun' ? (
          <RerunBody
            run={run}
            stepId={action.stepId}
            onStep={(stepId) => setAction({ kind: 'rerun', stepId })}
          />
        ) : (
          <Explanation action={action} run={run} />
        )}
        {mutation.isError && <ErrorPanel error={mutation.error} title="The orchestrator refused" />}
      </ConfirmDialog>
    );
  return { open, dialog };
}

export function RunActionBar({
  run,
  selectedStepId,
  open,
}: {
  run: RunDocument;
  selectedStepId: string | undefined;
  open: (a: RunAction) => void;
}) {
  const failed = Object.values(run.steps).some((s) => s.status === 'FAILED');
  const first = topologicalOrder(run.steps)[0];
  return (
    <div className="action-bar" role="group" aria-label="Run actions">
      <button
        type="button"
        className="btn btn-danger-outline"
        disabled={isTerminalRun(run.status)}
        onClick={() => open({ kind: 'cancel' })}
      >
        Cancel run
      </button>
      <button
        type="button"
        className="btn"
        disabled={run.status !== 'FAILED' || !failed}
        onClick={() => open({ kind: 'retry-run' })}
      >
        Retry failed steps
      </button>
      <button
        type="button"
        className="btn"
        disabled={!isTerminalRun(run.status) || first === undefined}
        onClick={() => open({ kind: 'rerun', stepId: selectedStepId ?? first ?? '' })}
      >
        Rerun from step…
      </button>
    </div>
  );
}
