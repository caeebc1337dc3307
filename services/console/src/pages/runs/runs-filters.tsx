import { useState, type FormEvent } from 'react';
import type { FlowSummary, RunStatus } from '../../api/api-types';
import { RUN_STATUS_OPTIONS, runStatusLabel } from '../../model/status';

export interface RunFilters {
  flowKey: string;
  status: RunStatus | '';
  symbol: string;
}

interface RunsFiltersProps {
  filters: RunFilters;
  flows: FlowSummary[] | undefined;
  onChange: (filters: RunFilters) => void;
}

/** Flow, status and symbol filters; they live in the URL so a filtered list is a link. */
export function RunsFilters({ filters, flows, onChange }: RunsFiltersProps) {
  // The parent remounts this form when the URL's symbol changes (key), so no syncing effect.
  const [symbol, setSymbol] = useState(filters.symbol);
  const submit = (event: FormEvent): void => {
    event.preventDefault();
    onChange({ ...filters, symbol: symbol.trim().toUpperCase() });
  };
  const active = filters.flowKey !== '' || filters.status !== '' || filters.symbol !== '';
  return (
    <form className="filters" role="search" aria-label="Filter runs" onSubmit={submit}>
      <label className="field">
        <span className="field-label">Flow</span>
        <select
          value={filters.flowKey}
          onChange={(e) => onChange({ ...filters, flowKey: e.target.value })}
        >
          <option value="">All flows</option>
          {(flows ?? []).map((f) => (
            <option key={f.flowKey} value={f.flowKey}>
              {f.flowKey}
            </option>
          ))}
        </select>
      </label>
      <label className="field">
        <span className="field-label">Status</span>
        <select
          value={filters.status}
          onChange={(e) => onChange({ ...filters, status: e.target.value as RunStatus | '' })}
        >
          <option value="">Any status</option>
          {RUN_STATUS_OPTIONS.map((s) => (
            <option key={s} value={s}>
              {runStatusLabel(s)}
            </option>
          ))}
        </select>
      </label>
      <label className="field">
        <span className="field-label">Symbol</span>
        <input
          type="search"
          value={symbol}
          placeholder="e.g. BTC-USDT"
          onChange={(e) => setSymbol(e.target.value)}
          onBlur={() =>
            symbol.trim().toUpperCase() !== filters.symbol &&
            onChange({ ...filters, symbol: symbol.trim().toUpperCase() })
          }
          autoCapitalize="characters"
          spellCheck={false}
        />
      </label>
      <div className="filters-actions">
        <button type="submit" className="btn">
          Apply
        </button>
        {active && (
          <button
            type="button"
            className="btn btn-ghost"
            onClick={() => onChange({ flowKey: '', status: '', symbol: '' })}
          >
            Clear filters
          </button>
        )}
      </div>
    </form>
  );
}
