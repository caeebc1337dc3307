import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import type { ReplayRequest, ReplayResponse } from '../../api/api-types';
import { api, unwrap } from '../../api/client';
import { fromDatetimeInput } from '../../model/scope-form';
import { ConfirmDialog } from '../../ui/confirm-dialog';
import { EmptyState } from '../../ui/empty-state';
import { ErrorPanel } from '../../ui/error-panel';
import { Timestamp } from '../../ui/time';

function Preview({ result }: { result: ReplayResponse }) {
  const steps = result.steps ?? [];
  const runs = result.runs ?? [];
  return (
    <section className="panel" aria-labelledby="preview-title">
      <h2 id="preview-title" className="panel-title">
        {result.dryRun ? 'What a replay would do' : result.seeked ? 'Replayed' : 'Result'}
      </h2>
      <p className="muted small">
        {result.subscription} · since <Timestamp iso={result.since} /> · {result.scannedRuns} runs
        scanned
        {result.truncated && ' (truncated)'}
      </p>
      <p className="notice">{result.note}</p>
      <div className="chips">
        {Object.entries(result.counts).map(([k, n]) => (
          <span key={k} className="chip">
            {k}: {n}
          </span>
        ))}
      </div>
      {steps.length === 0 && runs.length === 0 && (
        <EmptyState title="Nothing would be redelivered" />
      )}
      {steps.length > 0 && (
        <div className="table-wrap">
          <table className="data-table">
            <caption className="visually-hidden">Step-ready messages</caption>
            <thead>
              <tr>
                <th scope="col">Run</th>
                <th scope="col">Step</th>
                <th scope="col">Status</th>
                <th scope="col">Decision</th>
                <th scope="col">Summary</th>
              </tr>
            </thead>
            <tbody>
              {steps.map((s) => (
                <tr key={`${s.runId}-${s.stepId}`}>
                  <td>
                    <Link
                      className="mono small"
                      to={`/runs/${encodeURIComponent(s.runId)}?step=${encodeURIComponent(s.stepId)}`}
                    >
                      {s.runId}
                    </Link>
                  </td>
                  <td className="mono small">{s.stepId}</td>
                  <td>{s.stepStatus}</td>
                  <td>
                    <span className={`chip${s.decision === 'noop' ? '' : ' chip-warning'}`}>
                      {s.decision}
                    </span>
                  </td>
                  <td className="muted">{s.summary}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {runs.length > 0 && (
        <div className="table-wrap">
          <table className="data-table">
            <caption className="visually-hidden">
              Runs whose step events would be redelivered
            </caption>
            <thead>
              <tr>
                <th scope="col">Run</th>
                <th scope="col">Status</th>
                <th scope="col">Decision</th>
                <th scope="col">Would become ready</th>
                <th scope="col">Summary</th>
              </tr>
            </thead>
            <tbody>
              {runs.map((r) => (
                <tr key={r.runId}>
                  <td>
                    <Link className="mono small" to={`/runs/${encodeURIComponent(r.runId)}`}>
                      {r.runId}
                    </Link>
                  </td>
                  <td>{r.runStatus}</td>
                  <td>
                    <span className={`chip${r.decision === 'noop' ? '' : ' chip-warning'}`}>
                      {r.decision}
                    </span>
                  </td>
                  <td className="mono small">{r.wouldBecomeReady.join(', ') || '—'}</td>
                  <td className="muted">{r.summary}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/** Replay: preview (dryRun: true) first, then apply the same request after a confirmation. */
export function ReplayPage() {
  const [subscription, setSubscription] = useState('tda-step-events-sub');
  const [mode, setMode] = useState<'time' | 'snapshot'>('time');
  const [time, setTime] = useState('');
  const [snapshot, setSnapshot] = useState('');
  const [problem, setProblem] = useState<string | undefined>(undefined);
  const [previewed, setPreviewed] = useState<Omit<ReplayRequest, 'dryRun'> | undefined>(undefined);
  const [confirming, setConfirming] = useState(false);
  const replay = useMutation({
    mutationFn: (body: ReplayRequest) => unwrap(api.POST('/admin/replay', { body })),
  });

  const request = (): Omit<ReplayRequest, 'dryRun'> | undefined => {
    if (subscription.trim() === '') return (setProblem('Name a subscription'), undefined);
    if (mode === 'time') {
      const iso = fromDatetimeInput(time);
      if (iso === undefined) return (setProblem('Choose the time to replay from (UTC)'), undefined);
      return { subscription: subscription.trim(), time: iso };
    }
    if (snapshot.trim() === '') return (setProblem('Name the snapshot'), undefined);
    return { subscription: subscription.trim(), snapshot: snapshot.trim() };
  };
  const preview = (event: FormEvent): void => {
    event.preventDefault();
    setProblem(undefined);
    const body = request();
    if (body === undefined) return;
    setPreviewed(body);
    replay.mutate({ ...body, dryRun: true });
  };
  const changed = (): void => setPreviewed(undefined);
  const canApply = previewed !== undefined && replay.data?.dryRun === true && !replay.isPending;

  return (
    <div className="admin-page">
      <form className="panel replay-form" onSubmit={preview} noValidate aria-label="Replay">
        <div className="field">
          <label className="field-label" htmlFor="replay-subscription">
            Subscription{' '}
            <span className="required" aria-hidden="true">
              *
            </span>
          </label>
          <input
            id="replay-subscription"
            value={subscription}
            spellCheck={false}
            onChange={(e) => (setSubscription(e.target.value), changed())}
          />
          <span className="field-hint">
            &lt;prefix&gt;-step-events-sub or &lt;prefix&gt;-step-ready-&lt;step-type&gt;-sub
          </span>
        </div>
        <fieldset className="field">
          <legend className="field-label">Replay from</legend>
          <label className="checkbox">
            <input
              type="radio"
              name="mode"
              checked={mode === 'time'}
              onChange={() => (setMode('time'), changed())}
            />{' '}
            a time
          </label>
          <label className="checkbox">
            <input
              type="radio"
              name="mode"
              checked={mode === 'snapshot'}
              onChange={() => (setMode('snapshot'), changed())}
            />{' '}
            a snapshot
          </label>
        </fieldset>
        {mode === 'time' ? (
          <div className="field">
            <label className="field-label" htmlFor="replay-time">
              Time <span className="muted small">(UTC)</span>
            </label>
            <input
              id="replay-time"
              type="datetime-local"
              step={1}
              value={time}
              onChange={(e) => (setTime(e.target.value), changed())}
            />
          </div>
        ) : (
          <div className="field">
            <label className="field-label" htmlFor="replay-snapshot">
              Snapshot
            </label>
            <input
              id="replay-snapshot"
              value={snapshot}
              spellCheck={false}
              onChange={(e) => (setSnapshot(e.target.value), changed())}
            />
          </div>
        )}
        {problem !== undefined && (
          <p className="field-error" role="alert">
            {problem}
          </p>
        )}
        <div className="form-actions">
          <button type="submit" className="btn" disabled={replay.isPending}>
            {replay.isPending && replay.variables?.dryRun === true
              ? 'Previewing…'
              : 'Preview (dry run)'}
          </button>
          <button
            type="button"
            className="btn btn-danger"
            disabled={!canApply}
            onClick={() => setConfirming(true)}
          >
            Replay…
          </button>
        </div>
      </form>
      {replay.isError && !confirming && <ErrorPanel error={replay.error} title="Replay refused" />}
      {replay.data !== undefined && <Preview result={replay.data} />}
      <ConfirmDialog
        open={confirming}
        title="Seek the subscription now?"
        confirmLabel="Replay"
        danger
        busy={replay.isPending}
        onCancel={() => setConfirming(false)}
        onConfirm={() =>
          previewed !== undefined &&
          replay.mutate({ ...previewed, dryRun: false }, { onSettled: () => setConfirming(false) })
        }
      >
        <p>
          Pub/Sub redelivers the retained messages of{' '}
          <span className="mono">{previewed?.subscription}</span> as previewed. Every receiver
          re-reads its run and decides again, so finished runs are not changed.
        </p>
      </ConfirmDialog>
    </div>
  );
}
