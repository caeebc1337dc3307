import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import type { ReconcileReport } from '../../api/api-types';
import { api, unwrap } from '../../api/client';
import { formatDuration } from '../../model/format';
import { ConfirmDialog } from '../../ui/confirm-dialog';
import { EmptyState } from '../../ui/empty-state';
import { ErrorPanel } from '../../ui/error-panel';
import { JsonView } from '../../ui/json-view';
import { SkeletonBlock } from '../../ui/skeleton';
import { RunStatusBadge } from '../../ui/status-badge';
import { Timestamp } from '../../ui/time';

function Summary({ report }: { report: ReconcileReport }) {
  const stats: [string, number | undefined][] = [
    ['running runs scanned', report.runsScanned],
    ['ended runs scanned', report.endedRunsScanned],
    ['drift findings', report.drift.total],
    ['artifacts checked', report.artifactsChecked],
    ['artifacts missing', report.artifactsMissing],
    ['runs written', report.runsWritten],
    ['republished', report.republished],
  ];
  return (
    <>
      <div className="stat-row">
        {stats
          .filter((s): s is [string, number] => s[1] !== undefined)
          .map(([label, value]) => (
            <div key={label} className="stat">
              <span className="stat-value">{value}</span>
              <span className="stat-label">{label}</span>
            </div>
          ))}
      </div>
      <p className="muted small">
        {report.mode === 'dry_run' ? 'Dry run (nothing changed)' : 'Applied'} at{' '}
        <Timestamp iso={report.startedAt} /> in {formatDuration(report.durationMs)}
        {report.truncated && ` · truncated at ${report.maxRuns} runs`}
      </p>
      {Object.keys(report.drift.byKind).length > 0 && (
        <div className="chips">
          {Object.entries(report.drift.byKind).map(([kind, n]) => (
            <span key={kind} className="chip">
              {kind}: {n}
            </span>
          ))}
        </div>
      )}
    </>
  );
}

function DriftTable({ report }: { report: ReconcileReport }) {
  if (report.drift.runs.length === 0) {
    return <EmptyState title="No drift">Every running run matches its own rules.</EmptyState>;
  }
  return (
    <div className="table-wrap">
      <table className="data-table">
        <caption className="visually-hidden">Drift by run</caption>
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">Status</th>
            <th scope="col">Finding</th>
            <th scope="col">Step</th>
            <th scope="col">Action</th>
            <th scope="col">Detail</th>
          </tr>
        </thead>
        <tbody>
          {report.drift.runs.flatMap((run) =>
            run.items.map((item, i) => (
              <tr key={`${run.runId}-${i}`}>
                <td>
                  <Link
                    className="mono small"
                    to={`/runs/${encodeURIComponent(run.runId)}${item.stepId === undefined ? '' : `?step=${encodeURIComponent(item.stepId)}`}`}
                  >
                    {run.runId}
                  </Link>
                  <div className="muted small">{run.flowKey}</div>
                </td>
                <td>
                  <RunStatusBadge status={run.status} />
                </td>
                <td>{item.kind}</td>
                <td className="mono small">{item.stepId ?? '—'}</td>
                <td>
                  <span className="chip">{item.action}</span>
                </td>
                <td>
                  <JsonView value={item.detail} label="detail" />
                </td>
              </tr>
            )),
          )}
        </tbody>
      </table>
    </div>
  );
}

/** The reconciler's drift report (GET = dry run), and applying it now after a confirmation. */
export function ReconcilePage() {
  const queryClient = useQueryClient();
  const [artifacts, setArtifacts] = useState(true);
  const [confirming, setConfirming] = useState(false);
  const query = { artifacts: artifacts ? 'true' : 'false' } as const;
  const report = useQuery({
    queryKey: ['admin', 'reconcile', query],
    queryFn: () => unwrap(api.GET('/admin/reconcile', { params: { query } })),
  });
  const apply = useMutation({
    mutationFn: () => unwrap(api.POST('/admin/reconcile', { params: { query } })),
    onSuccess: (result) => {
      setConfirming(false);
      queryClient.setQueryData(['admin', 'reconcile', query], result);
      void queryClient.invalidateQueries({ queryKey: ['runs'] });
    },
  });
  return (
    <div className="admin-page">
      <div className="toolbar">
        <label className="checkbox">
          <input
            type="checkbox"
            checked={artifacts}
            onChange={(e) => setArtifacts(e.target.checked)}
          />
          Check that every succeeded step’s artifact exists
        </label>
        <button
          type="button"
          className="btn"
          onClick={() => void report.refetch()}
          disabled={report.isFetching}
        >
          {report.isFetching ? 'Checking…' : 'Check again'}
        </button>
        <button
          type="button"
          className="btn btn-primary"
          onClick={() => setConfirming(true)}
          disabled={report.data === undefined || report.data.drift.total === 0}
        >
          Apply now…
        </button>
      </div>
      {report.isPending && <SkeletonBlock lines={5} label="Running the dry run" />}
      {report.isError && (
        <ErrorPanel
          error={report.error}
          title="The reconcile report failed"
          onRetry={() => void report.refetch()}
        />
      )}
      {report.data !== undefined && (
        <>
          <Summary report={report.data} />
          <DriftTable report={report.data} />
        </>
      )}
      <ConfirmDialog
        open={confirming}
        title="Apply the reconcile decisions now?"
        confirmLabel="Apply"
        busy={apply.isPending}
        onCancel={() => setConfirming(false)}
        onConfirm={() => apply.mutate()}
      >
        <p>
          One conditional write per run with drift and step-ready messages for ready steps, as the
          timer does. Missing artifacts are reported, never fixed.
        </p>
        {apply.isError && <ErrorPanel error={apply.error} title="Not applied" />}
      </ConfirmDialog>
    </div>
  );
}
