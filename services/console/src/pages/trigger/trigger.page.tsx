import { useMutation, useQuery } from '@tanstack/react-query';
import { useMemo, useState, type FormEvent } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import type { FlowSummary, TriggerRequest } from '../../api/api-types';
import { api, unwrap } from '../../api/client';
import { flowsQuery } from '../../api/queries';
import {
  initialValues,
  scopeFormFromSchema,
  type FormValues,
  type ScopeForm,
} from '../../model/scope-form';
import { toScope, validateScope } from '../../model/scope-form-validate';
import { EmptyState } from '../../ui/empty-state';
import { ErrorPanel } from '../../ui/error-panel';
import { SkeletonBlock } from '../../ui/skeleton';
import { ScopeFieldView } from './scope-fields';

interface TriggerFormProps {
  flow: FlowSummary;
  form: ScopeForm;
}

function TriggerForm({ flow, form }: TriggerFormProps) {
  const navigate = useNavigate();
  const [values, setValues] = useState<FormValues>(() => initialValues(form));
  const [problems, setProblems] = useState<Record<string, string>>({});
  const [idempotencyKey, setIdempotencyKey] = useState('');
  const [deadline, setDeadline] = useState('');
  const trigger = useMutation({
    mutationFn: (body: TriggerRequest) => unwrap(api.POST('/runs', { body })),
    onSuccess: (run) => void navigate(`/runs/${encodeURIComponent(run.runId)}`),
  });

  const submit = (event: FormEvent): void => {
    event.preventDefault();
    const found = validateScope(form, values);
    const deadlineSeconds = deadline.trim() === '' ? undefined : Number(deadline);
    if (
      deadlineSeconds !== undefined &&
      !(Number.isInteger(deadlineSeconds) && deadlineSeconds >= 10 && deadlineSeconds <= 86_400)
    ) {
      found['deadlineSeconds'] = 'A whole number of seconds, 10 to 86400';
    }
    setProblems(found);
    if (Object.keys(found).length > 0) {
      document.getElementById(`field-${Object.keys(found)[0] ?? ''}`)?.focus();
      return;
    }
    const body: TriggerRequest = {
      flowKey: flow.flowKey,
      scope: toScope(form, values) as TriggerRequest['scope'],
    };
    if (idempotencyKey.trim() !== '') body.idempotencyKey = idempotencyKey.trim();
    if (deadlineSeconds !== undefined) body.deadlineSeconds = deadlineSeconds;
    trigger.mutate(body);
  };

  return (
    <form className="panel trigger-form" onSubmit={submit} noValidate aria-labelledby="form-title">
      <h2 id="form-title" className="panel-title">
        Scope
      </h2>
      {form.fields.map((field) => (
        <ScopeFieldView
          key={field.name}
          field={field}
          value={values[field.name]}
          problem={problems[field.name]}
          onChange={(value) => setValues((v) => ({ ...v, [field.name]: value }))}
        />
      ))}
      <details className="section-details">
        <summary>Advanced</summary>
        <div className="field">
          <label className="field-label" htmlFor="field-idempotencyKey">
            Idempotency key
          </label>
          <input
            id="field-idempotencyKey"
            value={idempotencyKey}
            onChange={(e) => setIdempotencyKey(e.target.value)}
            spellCheck={false}
          />
          <span className="field-hint">
            Triggering again with the same key returns the existing run.
          </span>
        </div>
        <div className="field">
          <label className="field-label" htmlFor="field-deadlineSeconds">
            Deadline (seconds)
          </label>
          <input
            id="field-deadlineSeconds"
            type="number"
            min={10}
            max={86400}
            value={deadline}
            onChange={(e) => setDeadline(e.target.value)}
            aria-invalid={problems['deadlineSeconds'] !== undefined}
            aria-describedby={
              problems['deadlineSeconds'] === undefined ? undefined : 'error-deadlineSeconds'
            }
          />
          {problems['deadlineSeconds'] !== undefined && (
            <span id="error-deadlineSeconds" className="field-error">
              {problems['deadlineSeconds']}
            </span>
          )}
        </div>
      </details>
      {trigger.isError && <ErrorPanel error={trigger.error} title="The run was not created" />}
      <div className="form-actions">
        <button type="submit" className="btn btn-primary" disabled={trigger.isPending}>
          {trigger.isPending ? 'Triggering…' : 'Trigger run'}
        </button>
      </div>
    </form>
  );
}

export function TriggerPage() {
  const [params, setParams] = useSearchParams();
  const flows = useQuery(flowsQuery());
  const urlFlow = params.get('flow') ?? '';
  // The choice shows at once; the URL (a deep link, Back) follows and wins when it changes.
  const [chosen, setChosen] = useState({ url: urlFlow, flowKey: urlFlow });
  if (chosen.url !== urlFlow) setChosen({ url: urlFlow, flowKey: urlFlow });
  const flowKey = chosen.url === urlFlow ? chosen.flowKey : urlFlow;
  const flow = flows.data?.find((f) => f.flowKey === flowKey);
  const form = useMemo(
    () => (flow === undefined ? undefined : scopeFormFromSchema(flow.scopeSchema)),
    [flow],
  );
  return (
    <section aria-labelledby="trigger-title" className="trigger-page">
      <div className="page-head">
        <div>
          <h1 id="trigger-title">Trigger a run</h1>
          <p className="muted">Choose a flow, fill in its scope, and follow the run live.</p>
        </div>
      </div>
      {flows.isPending && <SkeletonBlock lines={4} label="Loading flows" />}
      {flows.isError && (
        <ErrorPanel
          error={flows.error}
          title="The flows could not be loaded"
          onRetry={() => void flows.refetch()}
        />
      )}
      {flows.data !== undefined && flows.data.length === 0 && (
        <EmptyState title="No flows can be triggered" />
      )}
      {flows.data !== undefined && flows.data.length > 0 && (
        <div className="trigger-layout">
          <fieldset className="flow-picker">
            <legend className="field-label">Flow</legend>
            {flows.data.map((f) => (
              <label
                key={f.flowKey}
                className={`flow-option${f.flowKey === flowKey ? ' is-selected' : ''}`}
              >
                <input
                  type="radio"
                  name="flow"
                  value={f.flowKey}
                  checked={f.flowKey === flowKey}
                  onChange={() => {
                    setChosen({ url: urlFlow, flowKey: f.flowKey });
                    setParams({ flow: f.flowKey });
                  }}
                />
                <span className="flow-key mono">{f.flowKey}</span>
                <span className="flow-description muted">{f.description}</span>
              </label>
            ))}
          </fieldset>
          {flow === undefined && (
            <div className="panel">
              <p className="muted">
                {flowKey === '' ? 'Choose a flow to see its form.' : `There is no flow ${flowKey}.`}
              </p>
            </div>
          )}
          {flow !== undefined && form !== undefined && (
            <TriggerForm key={flow.flowKey} flow={flow} form={form} />
          )}
        </div>
      )}
    </section>
  );
}
