import type { FieldValue, FormValues, ScopeField } from '../../model/scope-form';

interface FieldProps {
  field: ScopeField;
  value: FieldValue | undefined;
  problem: string | undefined;
  onChange: (value: FieldValue) => void;
}

function describedBy(field: ScopeField, problem: string | undefined): string | undefined {
  const ids = [
    field.description === undefined ? '' : `hint-${field.name}`,
    problem === undefined ? '' : `error-${field.name}`,
  ];
  const joined = ids.filter((id) => id !== '').join(' ');
  return joined === '' ? undefined : joined;
}

function Control({ field, value, problem, onChange }: FieldProps) {
  const id = `field-${field.name}`;
  const common = {
    id,
    'aria-invalid': problem !== undefined,
    'aria-describedby': describedBy(field, problem),
    'aria-required': field.required,
  };
  const text = typeof value === 'string' ? value : '';
  switch (field.kind) {
    case 'select':
      return (
        <select {...common} value={text} onChange={(e) => onChange(e.target.value)}>
          <option value="">{field.required ? 'Choose…' : '(none)'}</option>
          {field.options?.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      );
    case 'datetime':
      return (
        <input
          {...common}
          type="datetime-local"
          step={1}
          value={text}
          onChange={(e) => onChange(e.target.value)}
        />
      );
    case 'number':
      return (
        <input
          {...common}
          type="number"
          inputMode={field.integer === true ? 'numeric' : 'decimal'}
          min={field.minimum}
          max={field.maximum}
          step={field.integer === true ? 1 : 'any'}
          value={text}
          onChange={(e) => onChange(e.target.value)}
        />
      );
    case 'json':
      return (
        <textarea
          {...common}
          rows={4}
          className="mono"
          value={text}
          onChange={(e) => onChange(e.target.value)}
        />
      );
    default:
      return (
        <input
          {...common}
          type="text"
          value={text}
          placeholder={field.placeholder ?? (field.kind === 'list' ? 'comma-separated' : undefined)}
          spellCheck={false}
          onChange={(e) => onChange(e.target.value)}
        />
      );
  }
}

function Checkboxes({ field, value, problem, onChange }: FieldProps) {
  const chosen = Array.isArray(value) ? value : [];
  return (
    <fieldset
      className="field checkbox-group"
      aria-describedby={describedBy(field, problem)}
      aria-invalid={problem !== undefined}
    >
      <legend className="field-label">
        {field.label}
        {field.required && (
          <span className="required" aria-hidden="true">
            {' '}
            *
          </span>
        )}
        {field.required && <span className="visually-hidden"> (required)</span>}
      </legend>
      <div className="checkbox-options">
        {field.options?.map((option) => (
          <label key={option} className="checkbox">
            <input
              type="checkbox"
              checked={chosen.includes(option)}
              onChange={(e) =>
                onChange(
                  e.target.checked ? [...chosen, option] : chosen.filter((c) => c !== option),
                )
              }
            />
            {option}
          </label>
        ))}
      </div>
      <FieldNotes field={field} problem={problem} />
    </fieldset>
  );
}

function FieldNotes({ field, problem }: { field: ScopeField; problem: string | undefined }) {
  return (
    <>
      {field.description !== undefined && (
        <span id={`hint-${field.name}`} className="field-hint">
          {field.description}
        </span>
      )}
      {problem !== undefined && (
        <span id={`error-${field.name}`} className="field-error">
          {problem}
        </span>
      )}
    </>
  );
}

/** One generated field: label with the required mark, control, hint, error message. */
export function ScopeFieldView(props: FieldProps) {
  const { field, value, problem, onChange } = props;
  if (field.kind === 'checkboxes') return <Checkboxes {...props} />;
  if (field.kind === 'boolean') {
    return (
      <div className="field">
        <label className="checkbox">
          <input
            type="checkbox"
            checked={value === true}
            onChange={(e) => onChange(e.target.checked)}
          />
          {field.label}
        </label>
        <FieldNotes field={field} problem={problem} />
      </div>
    );
  }
  return (
    <div className="field">
      <label className="field-label" htmlFor={`field-${field.name}`}>
        {field.label}
        {field.kind === 'datetime' && <span className="muted small"> (UTC)</span>}
        {field.required && (
          <span className="required" aria-hidden="true">
            {' '}
            *
          </span>
        )}
      </label>
      <Control {...props} />
      <FieldNotes field={field} problem={problem} />
    </div>
  );
}

export type { FormValues };
