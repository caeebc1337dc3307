import { CopyButton } from './copy-button';

function Value({ value, depth }: { value: unknown; depth: number }) {
  if (value === null) return <span className="json-null">null</span>;
  if (typeof value === 'string') return <span className="json-string">"{value}"</span>;
  if (typeof value === 'number') return <span className="json-number">{value}</span>;
  if (typeof value === 'boolean') return <span className="json-bool">{String(value)}</span>;
  if (typeof value !== 'object') return <span>{String(value)}</span>;
  const entries: [string, unknown][] = Array.isArray(value)
    ? value.map((v, i) => [String(i), v])
    : Object.entries(value);
  const open = Array.isArray(value) ? '[' : '{';
  const close = Array.isArray(value) ? ']' : '}';
  if (entries.length === 0) return <span>{`${open}${close}`}</span>;
  return (
    <details className="json-node" open={depth < 2}>
      <summary>
        {open}
        <span className="muted small">
          {' '}
          {entries.length} {Array.isArray(value) ? 'items' : 'keys'}{' '}
        </span>
        {close}
      </summary>
      <ul className="json-entries">
        {entries.map(([key, child]) => (
          <li key={key}>
            <span className="json-key">{key}</span>: <Value value={child} depth={depth + 1} />
          </li>
        ))}
      </ul>
    </details>
  );
}

/** A collapsible JSON tree with a copy button (inputs, outputs, details). */
export function JsonView({ value, label }: { value: unknown; label?: string }) {
  return (
    <div className="json-view" role="group" aria-label={label ?? 'JSON'}>
      <div className="json-toolbar">
        <CopyButton
          text={JSON.stringify(value, null, 2)}
          label={label === undefined ? 'Copy JSON' : `Copy ${label}`}
        />
      </div>
      <div className="json-body">
        <Value value={value} depth={0} />
      </div>
    </div>
  );
}
