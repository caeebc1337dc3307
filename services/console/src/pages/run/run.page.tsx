import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback } from 'react';
import { useParams, useSearchParams } from 'react-router';
import { toRunDocument, type ApiFlowRun } from '../../api/api-types';
import { queryKeys, runQuery } from '../../api/queries';
import { useSession } from '../../auth/session';
import { pollWhileNotLive, useEventStream } from '../../live/use-event-stream';
import type { RunEvent } from '../../live/sse-parser';
import { isTerminalRun } from '../../model/status';
import { ErrorPanel } from '../../ui/error-panel';
import { SkeletonBlock } from '../../ui/skeleton';
import { useNow } from '../../ui/time';
import { RunActionBar, useRunActions } from './run-actions';
import { RunGraph } from './run-graph';
import { RunHeader } from './run-header';
import { RunTimeline } from './run-timeline';
import { StepPanel } from './step-panel';

export function RunPage() {
  const { runId = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const queryClient = useQueryClient();
  const { expire } = useSession();

  const onEvent = useCallback(
    (event: RunEvent) => {
      if (event.runId !== runId) return;
      void queryClient.invalidateQueries({ queryKey: queryKeys.run(runId) });
      if (event.type === 'run.step.completed' && event.stepId !== undefined) {
        void queryClient.invalidateQueries({ queryKey: queryKeys.artifact(runId, event.stepId) });
      }
    },
    [queryClient, runId],
  );
  const cached = queryClient.getQueryData<ApiFlowRun>(queryKeys.run(runId));
  const terminal = cached !== undefined && isTerminalRun(cached.status);
  const stream = useEventStream(
    terminal ? null : `/runs/${encodeURIComponent(runId)}/events`,
    onEvent,
    {
      // the per-run stream ends with its run: reconnect only while it is still going
      shouldReconnect: () => {
        const now = queryClient.getQueryData<ApiFlowRun>(queryKeys.run(runId));
        return now === undefined || !isTerminalRun(now.status);
      },
      onUnauthorized: expire,
    },
  );
  const run = useQuery({
    ...runQuery(runId),
    refetchInterval: (q) =>
      q.state.data !== undefined && isTerminalRun(q.state.data.status)
        ? false
        : pollWhileNotLive(stream),
  });
  const doc = run.data === undefined ? undefined : toRunDocument(run.data);
  const now = useNow(1000, doc !== undefined && !isTerminalRun(doc.status));
  const actions = useRunActions(doc ?? placeholderRun(runId));

  if (run.isPending) return <SkeletonBlock lines={8} label="Loading the run" />;
  if (run.isError || doc === undefined) {
    return (
      <ErrorPanel
        error={run.error}
        title="This run could not be loaded"
        onRetry={() => void run.refetch()}
      />
    );
  }

  const selected = params.get('step') ?? doc.progress?.currentStepId ?? undefined;
  const select = (stepId: string): void => {
    if (stepId === params.get('step')) return;
    const next = new URLSearchParams(params);
    next.set('step', stepId);
    setParams(next, { replace: false });
  };
  return (
    <div className="run-page">
      <RunHeader run={doc} stream={isTerminalRun(doc.status) ? 'closed' : stream} now={now} />
      <RunActionBar run={doc} selectedStepId={selected} open={actions.open} />
      <section className="panel" aria-labelledby="graph-title">
        <h2 id="graph-title" className="panel-title">
          Steps
        </h2>
        <RunGraph run={doc} selectedStepId={selected} onSelect={select} />
      </section>
      <div className="run-columns">
        <section className="panel" aria-labelledby="timeline-title">
          <h2 id="timeline-title" className="panel-title">
            Timeline
          </h2>
          <RunTimeline run={doc} now={now} selectedStepId={selected} onSelect={select} />
        </section>
        {selected !== undefined ? (
          <StepPanel
            run={doc}
            stepId={selected}
            now={now}
            onSelect={select}
            onRetry={(stepId) => actions.open({ kind: 'retry-step', stepId })}
            onRerun={(stepId) => actions.open({ kind: 'rerun', stepId })}
          />
        ) : (
          <section className="panel">
            <p className="muted">Select a step in the graph or the timeline.</p>
          </section>
        )}
      </div>
      {actions.dialog}
    </div>
  );
}

/** Hooks run before the run is loaded; the actions need a document (never shown). */
function placeholderRun(runId: string) {
  return toRunDocument({
    schemaVersion: 1,
    runId,
    flowKey: '',
    status: 'PENDING',
    createdAt: '',
    updatedAt: '',
    trigger: {},
    scope: {},
    ownerId: '',
    steps: {},
  });
}
