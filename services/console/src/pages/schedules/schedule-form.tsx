import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState, type FormEvent, type ReactNode } from 'react';
import type { FlowSummary } from '../../api/api-types';
import { flowsQuery } from '../../api/queries';
import {
  scheduleKeys,
  schedulesApi,
  type FlowScheduleRequest,
  type ScheduleView,
} from '../../api/schedules-api';
import {
  CRON_EXAMPLES,
  initialScheduleFields,
  scheduleScopeForm,
  toScheduleRequest,
  validateScheduleFields,
  type CatchUp,
  type Overlap,
  type ScheduleFields,
} from '../../model/schedules';
import { initialValues, scopeFormFromSchema, type FormValues } from '../../model/scope-form';
import { toScope, validateScope } from '../../model/scope-form-validate';
import { ErrorPanel } from '../../ui/error-panel';
import { SkeletonBlock } from '../../ui/skeleton';
import { ScopeFieldView } from '../trigger/scope-fields';

/** Every IANA zone the browser knows, for the time zone suggestions. */
const TIME_ZONES: readonly string[] = (() => {
  try {
    return ['UTC', ...Intl.supportedValuesOf('timeZone').filter((z) => z !== 'UTC')];
  } catch {
    return ['UTC'];
  }
})();

interface FieldRowProps {
  id: string;
  label: string;
  hint?: ReactNode;
  problem: string | undefined;
  children: (aria: {
    id: string;
    'aria-invalid': boolean;
    'aria-describedby'?: string;
  }) => ReactNode;
}

/** A labelled control with its hint and error, wired for assistive technology. */
function FieldRow({ id, label, hint, problem, children }: FieldRowProps) {
  const describedBy = [
    hint === undefined ? '' : `${id}-hint`,
    problem === undefined ? '' : `${id}-error`,
  ]
    .filter((d) => d !== '')
    .join(' ');
  return (
    <div className="field">
      <label className="field-label" htmlFor={id}>
        {label}
      </label>
      {children({
        id,
        'aria-invalid': problem !== undefined,
        ...(describedBy === '' ? {} : { 'aria-describedby': describedBy }),
      })}
      {hint !== undefined && (
        <span id={`${id}-hint`} className="field-hint">
          {hint}
        </span>
      )}
      {problem !== undefined && (
        <span id={`${id}-error`} className="field-error">
          {problem}
        </span>
      )}
    </div>
  );
}

function TimingFields({
  fields,
  problems,
  set,
}: {
  fields: ScheduleFields;
  problems: Record<string, string>;
  set: (change: Partial<ScheduleFields>) => void;
}) {
  return (
    <div className="form-row">
      <FieldRow
        id="schedule-cron"
        label="Cron (minute hour day month weekday)"
        problem={problems['cron']}
        hint={
          <>
            e.g.{' '}
            {CRON_EXAMPLES.map((e, i) => (
              <span key={e.cron}>
                {i > 0 && ', '}
                <button
                  type="button"
                  className="btn-link mono"
                  onClick={() => set({ cron: e.cron })}
                  title={e.label}
                >
                  {e.cron}
                </button>
              </span>
            ))}
          </>
        }
      >
        {(aria) => (
          <input
            {...aria}
            className="mono"
            value={fields.cron}
            spellCheck={false}
            onChange={(e) => set({ cron: e.target.value })}
          />
        )}
      </FieldRow>
      <FieldRow
        id="schedule-tz"
        label="Time zone"
        problem={problems['timeZone']}
        hint="The cron is read in this zone (DST aware)"
      >
        {(aria) => (
          <>
            <input
              {...aria}
              list="schedule-tz-options"
              value={fields.timeZone}
              spellCheck={false}
              autoComplete="off"
              onChange={(e) => set({ timeZone: e.target.value })}
            />
            <datalist id="schedule-tz-options">
              {TIME_ZONES.map((z) => (
                <option key={z} value={z} />
              ))}
            </datalist>
          </>
        )}
      </FieldRow>
    </div>
  );
}

function PolicyFields({
  fields,
  problems,
  set,
}: {
  fields: ScheduleFields;
  problems: Record<string, string>;
  set: (change: Partial<ScheduleFields>) => void;
}) {
  return (
    <>
      <div className="form-row">
        <FieldRow
          id="schedule-min-signal"
          label="Minimum signal strength"
          problem={problems['minSignal']}
          hint="0–1; empty: the schedule emits no signals"
        >
          {(aria) => (
            <input
              {...aria}
              type="number"
              inputMode="decimal"
              min={0}
              max={1}
              step={0.05}
              placeholder="no signals"
              value={fields.minSignal}
              onChange={(e) => set({ minSignal: e.target.value })}
            />
          )}
        </FieldRow>
        <FieldRow
          id="schedule-catch-up"
          label="Missed slots"
          problem={undefined}
          hint="After an outage"
        >
          {(aria) => (
            <select
              {...aria}
              value={fields.catchUp}
              onChange={(e) => set({ catchUp: e.target.value as CatchUp })}
            >
              <option value="skip">skip (fire only a fresh slot)</option>
              <option value="latest">latest (fire the latest once)</option>
            </select>
          )}
        </FieldRow>
        <FieldRow id="schedule-overlap" label="Previous run still active" problem={undefined}>
          {(aria) => (
            <select
              {...aria}
              value={fields.overlap}
              onChange={(e) => set({ overlap: e.target.value as Overlap })}
            >
              <option value="skip">skip the slot</option>
              <option value="allow">fire anyway</option>
            </select>
          )}
        </FieldRow>
      </div>
      <FieldRow id="schedule-description" label="Description" problem={problems['description']}>
        {(aria) => (
          <input
            {...aria}
            maxLength={200}
            value={fields.description}
            onChange={(e) => set({ description: e.target.value })}
          />
        )}
      </FieldRow>
      <div className="field">
        <label className="checkbox">
          <input
            type="checkbox"
            checked={fields.paused}
            onChange={(e) => set({ paused: e.target.checked })}
          />
          Create it paused
        </label>
      </div>
    </>
  );
}

function ScheduleFormBody({
  flow,
  onCreated,
  onCancel,
}: {
  flow: FlowSummary;
  onCreated: (schedule: ScheduleView) => void;
  onCancel: () => void;
}) {
  const queryClient = useQueryClient();
  const form = useMemo(() => scheduleScopeForm(scopeFormFromSchema(flow.scopeSchema)), [flow]);
  const [values, setValues] = useState<FormValues>(() => initialValues(form));
  const [fields, setFields] = useState<ScheduleFields>(initialScheduleFields);
  const [problems, setProblems] = useState<Record<string, string>>({});
  const create = useMutation({
    mutationFn: (body: FlowScheduleRequest) => schedulesApi.create(body),
    onSuccess: (schedule) => {
      void queryClient.invalidateQueries({ queryKey: scheduleKeys.all });
      onCreated(schedule);
    },
  });
  const set = (change: Partial<ScheduleFields>): void => setFields((f) => ({ ...f, ...change }));
  const submit = (event: FormEvent): void => {
    event.preventDefault();
    const scopeProblems = validateScope(form, values);
    const own = validateScheduleFields(fields);
    setProblems({ ...scopeProblems, ...own });
    const first = Object.keys(scopeProblems)[0];
    if (first !== undefined) {
      document.getElementById(`field-${first}`)?.focus();
      return;
    }
    const firstOwn = Object.keys(own)[0];
    if (firstOwn !== undefined) {
      const ids: Record<string, string> = {
        cron: 'schedule-cron',
        timeZone: 'schedule-tz',
        minSignal: 'schedule-min-signal',
        description: 'schedule-description',
      };
      document.getElementById(ids[firstOwn] ?? '')?.focus();
      return;
    }
    create.mutate(toScheduleRequest(flow.flowKey, toScope(form, values), fields));
  };
  return (
    <form onSubmit={submit} noValidate aria-label="New schedule">
      <h3 className="panel-title">Scope of every run</h3>
      {form.fields.map((field) => (
        <ScopeFieldView
          key={field.name}
          field={field}
          value={values[field.name]}
          problem={problems[field.name]}
          onChange={(value) => setValues((v) => ({ ...v, [field.name]: value }))}
        />
      ))}
      <h3 className="panel-title">When</h3>
      <TimingFields fields={fields} problems={problems} set={set} />
      <h3 className="panel-title">Signals and policies</h3>
      <PolicyFields fields={fields} problems={problems} set={set} />
      {create.isError && <ErrorPanel error={create.error} title="The schedule was not created" />}
      <div className="form-actions">
        <button type="submit" className="btn btn-primary" disabled={create.isPending}>
          {create.isPending ? 'Creating…' : 'Create schedule'}
        </button>
        <button type="button" className="btn" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** Create a schedule: a flow, the scope of its runs (the flow's form, without asOf), when, and policies. */
export function ScheduleCreatePanel({
  initialFlowKey = '',
  onCreated,
  onCancel,
}: {
  /** A deep link's choice (?new=1&flow=…). */
  initialFlowKey?: string;
  onCreated: (schedule: ScheduleView) => void;
  onCancel: () => void;
}) {
  const flows = useQuery(flowsQuery());
  const [flowKey, setFlowKey] = useState(initialFlowKey);
  const flow = flows.data?.find((f) => f.flowKey === flowKey);
  return (
    <section
      id="schedule-create"
      className="panel schedule-create"
      aria-labelledby="schedule-create-title"
    >
      <h2 id="schedule-create-title" className="panel-title">
        New schedule
      </h2>
      {flows.isPending && <SkeletonBlock lines={3} label="Loading flows" />}
      {flows.isError && (
        <ErrorPanel
          error={flows.error}
          title="The flows could not be loaded"
          onRetry={() => void flows.refetch()}
        />
      )}
      {flows.data !== undefined && (
        <div className="field">
          <label className="field-label" htmlFor="schedule-flow">
            Flow
          </label>
          <select id="schedule-flow" value={flowKey} onChange={(e) => setFlowKey(e.target.value)}>
            <option value="">Choose a flow…</option>
            {flows.data.map((f) => (
              <option key={f.flowKey} value={f.flowKey}>
                {f.flowKey}
              </option>
            ))}
          </select>
          {flow !== undefined && <span className="field-hint">{flow.description}</span>}
        </div>
      )}
      {flow === undefined ? (
        <div className="form-actions">
          <button type="button" className="btn" onClick={onCancel}>
            Cancel
          </button>
        </div>
      ) : (
        <ScheduleFormBody
          key={flow.flowKey}
          flow={flow}
          onCreated={onCreated}
          onCancel={onCancel}
        />
      )}
    </section>
  );
}
