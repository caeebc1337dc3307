import { useQuery } from '@tanstack/react-query';
import type { RunDocument, RunStep } from '../../api/api-types';
import { blockedOnQuery } from '../../api/queries';
import { modelMetadata } from '../../model/artifacts';
import { plainReasons } from '../../model/blocked-on';
import { durationBetween, formatDuration } from '../../model/format';
import { ErrorPanel } from '../../ui/error-panel';
import { JsonView } from '../../ui/json-view';
import { SkeletonBlock } from '../../ui/skeleton';
import { StepStatusBadge } from '../../ui/status-badge';
import { Timestamp } from '../../ui/time';
import { ArtifactPreview } from './artifact-preview';
import { ModelMetadataCard } from './model-metadata';
import { stepTypeLabel } from './step-labels';

interface StepPanelProps {
  run: RunDocument;
  stepId: string;
  now: number;
  onSelect: (stepId: string) => void;
  onRetry: (stepId: string) => void;
  onRerun: (stepId: string) => void;
}

function WhyNotRunning({
  runId,
  stepId,
  onSelect,
}: {
  runId: string;
  stepId: string;
  onSelect: (id: string) => void;
}) {
  const explanation = useQuery(blockedOnQuery(runId, stepId));
  if (explanation.isPending) return <SkeletonBlock lines={2} label="Asking the orchestrator" />;
  if (explanation.isError)
    return <ErrorPanel error={explanation.error} title="No explanation available" />;
  return (
    <ul className="reasons">
      {plainReasons(explanation.data).map((reason, i) => (
        <li key={i} className={reason.warning ? 'reason-warning' : undefined}>
          {reason.text}
          {reason.stepIds.length > 0 && (
            <span className="reason-links">
              {reason.stepIds.map((id) => (
                <button
                  key={id}
                  type="button"
                  className="btn btn-link"
                  onClick={() => onSelect(id)}
                >
                  Show {id}
                </button>
              ))}
            </span>
          )}
        </li>
      ))}
    </ul>
  );
}

function StepFacts({ step, now }: { step: RunStep; now: number }) {
  const timing = step.outputs.execution?.timing;
  const leaseExpired = step.lease !== undefined && Date.parse(step.lease.expiresAt) <= now;
  const reused = step.outputs.execution?.['reusedFrom'] as { runId?: string } | undefined;
  const worker = step.outputs.execution?.worker;
  return (
    <dl className="facts">
      {step.addedBy !== undefined && (
        <div className="fact">
          <dt>Added by</dt>
          <dd>
            {step.addedBy.stepId} (at run time, expansion depth {step.addedBy.depth})
          </dd>
        </div>
      )}
      <div className="fact">
        <dt>Attempt</dt>
        <dd>
          {step.attempt}
          {step.maxAttempts === undefined ? '' : ` of ${step.maxAttempts}`}
        </dd>
      </div>
      {step.lease !== undefined && (
        <div className="fact">
          <dt>Lease</dt>
          <dd>
            <span className="mono small">{step.lease.owner}</span> until{' '}
            <Timestamp iso={step.lease.expiresAt} />
            {leaseExpired && step.status === 'RUNNING' && (
              <span className="chip chip-warning">expired</span>
            )}
          </dd>
        </div>
      )}
      {step.deadlineAt !== undefined && (
        <div className="fact">
          <dt>Deadline</dt>
          <dd>
            <Timestamp iso={step.deadlineAt} />
          </dd>
        </div>
      )}
      <div className="fact">
        <dt>Ready</dt>
        <dd>
          <Timestamp iso={step.readyAt} />
        </dd>
      </div>
      <div className="fact">
        <dt>Claimed</dt>
        <dd>
          <Timestamp iso={timing?.startedAt} />
        </dd>
      </div>
      <div className="fact">
        <dt>Finished</dt>
        <dd>
          <Timestamp iso={step.finishedAt ?? timing?.finishedAt} />
        </dd>
      </div>
      <div className="fact">
        <dt>Run time</dt>
        <dd>
          {formatDuration(
            durationBetween(timing?.startedAt, step.finishedAt ?? timing?.finishedAt, now),
          )}
        </dd>
      </div>
      {worker !== undefined && (
        <div className="fact">
          <dt>Worker</dt>
          <dd className="mono small">{worker}</dd>
        </div>
      )}
      {reused?.runId !== undefined && (
        <div className="fact">
          <dt>Reused from</dt>
          <dd className="mono small">{reused.runId}</dd>
        </div>
      )}
    </dl>
  );
}

/** Everything about one step: facts, error, why it waits, the model, the result, inputs/outputs. */
export function StepPanel({ run, stepId, now, onSelect, onRetry, onRerun }: StepPanelProps) {
  const step = run.steps[stepId];
  if (step === undefined) {
    return (
      <div className="panel">
        <p role="alert">
          This run has no step <span className="mono">{stepId}</span>.
        </p>
      </div>
    );
  }
  const llm = modelMetadata(step.outputs.execution?.llm);
  const history = Array.isArray(step['retryHistory']) ? (step['retryHistory'] as unknown[]) : [];
  const canRetry = step.status === 'FAILED' && run.status === 'FAILED';
  const canRerun =
    run.status === 'SUCCEEDED' || run.status === 'FAILED' || run.status === 'CANCELLED';
  return (
    <section className="panel step-panel" aria-labelledby="step-title">
      <header className="step-panel-head">
        <div>
          <p className="eyebrow">{stepTypeLabel(step.stepType)}</p>
          <h2 id="step-title" className="mono step-title">
            {stepId}
          </h2>
        </div>
        <div className="step-panel-actions">
          <StepStatusBadge status={step.status} />
          {canRetry && (
            <button
              type="button"
              className="btn btn-primary btn-small"
              onClick={() => onRetry(stepId)}
            >
              Retry step
            </button>
          )}
          {canRerun && (
            <button type="button" className="btn btn-small" onClick={() => onRerun(stepId)}>
              Rerun from here
            </button>
          )}
        </div>
      </header>
      <StepFacts step={step} now={now} />
      {step.error !== undefined && (
        <div className="error-panel" role="note">
          <p className="error-line">
            <code className="error-code">{step.error.code}</code>: {step.error.message}
          </p>
          {step.error.retryable && (
            <p className="muted small">The worker marked this failure retryable.</p>
          )}
          {step.error.details !== undefined && Object.keys(step.error.details).length > 0 && (
            <JsonView value={step.error.details} label="error details" />
          )}
        </div>
      )}
      {step.status !== 'SUCCEEDED' && (
        <section aria-labelledby="why-title">
          <h3 id="why-title">
            {step.status === 'RUNNING' ? 'What is it doing?' : 'Why is it not running?'}
          </h3>
          <WhyNotRunning runId={run.runId} stepId={stepId} onSelect={onSelect} />
        </section>
      )}
      {llm !== undefined && (
        <section aria-labelledby="model-title">
          <h3 id="model-title">Model</h3>
          <ModelMetadataCard meta={llm} />
        </section>
      )}
      {step.status === 'SUCCEEDED' && step.outputs.gcs_uri !== undefined && (
        <section aria-labelledby="result-title">
          <h3 id="result-title">Result</h3>
          <ArtifactPreview
            runId={run.runId}
            stepId={stepId}
            stepType={step.stepType}
            withModel={llm === undefined}
          />
        </section>
      )}
      <details className="section-details">
        <summary>Inputs</summary>
        <JsonView value={step.inputs} label="inputs" />
      </details>
      <details className="section-details">
        <summary>Outputs</summary>
        <JsonView value={step.outputs} label="outputs" />
      </details>
      {history.length > 0 && (
        <details className="section-details">
          <summary>Earlier attempts ({history.length})</summary>
          <JsonView value={history} label="retry history" />
        </details>
      )}
    </section>
  );
}
