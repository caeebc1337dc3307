import { useInfiniteQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { signalListQuery, type Signal } from '../../api/schedules-api';
import { formatStrength } from '../../model/schedules';
import { formatUtc } from '../../model/format';
import { EmptyState } from '../../ui/empty-state';
import { ErrorPanel } from '../../ui/error-panel';
import { SkeletonBlock } from '../../ui/skeleton';
import { RelativeTime, useNow } from '../../ui/time';

const ACTION_TONE: Readonly<Record<Signal['action'], string>> = {
  BUY: 'success',
  SELL: 'danger',
  REDUCE: 'stopped',
  HOLD: 'idle',
};

function SymbolFilter({ symbol, onChange }: { symbol: string; onChange: (s: string) => void }) {
  // The parent remounts this form when the URL's symbol changes (key), so no syncing effect.
  const [text, setText] = useState(symbol);
  const submit = (event: FormEvent): void => {
    event.preventDefault();
    onChange(text.trim().toUpperCase());
  };
  return (
    <form
      className="filters signals-filters"
      role="search"
      aria-label="Filter signals"
      onSubmit={submit}
    >
      <label className="field">
        <span className="field-label">Symbol</span>
        <input
          type="search"
          value={text}
          placeholder="e.g. BTC-USDT"
          onChange={(e) => setText(e.target.value)}
          autoCapitalize="characters"
          spellCheck={false}
        />
      </label>
      <div className="filters-actions">
        <button type="submit" className="btn">
          Apply
        </button>
        {symbol !== '' && (
          <button type="button" className="btn btn-ghost" onClick={() => onChange('')}>
            Clear filter
          </button>
        )}
      </div>
    </form>
  );
}

function SignalRows({ signals, now }: { signals: Signal[]; now: number }) {
  return (
    <div className="table-wrap">
      <table className="data-table signals-table">
        <caption className="visually-hidden">Signals, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Symbol</th>
            <th scope="col">Action</th>
            <th scope="col" className="num">
              Strength
            </th>
            <th scope="col">Headline</th>
            <th scope="col">Schedule</th>
            <th scope="col">Run</th>
          </tr>
        </thead>
        <tbody>
          {signals.map((s) => (
            <tr key={s.signalId}>
              <td data-label="Time">
                <RelativeTime iso={s.createdAt} now={now} />
                <div className="muted small">slot {formatUtc(s.slotAt)}</div>
              </td>
              <td data-label="Symbol" className="mono">
                {s.symbol}
              </td>
              <td data-label="Action">
                <span className={`badge tone-${ACTION_TONE[s.action]}`}>{s.action}</span>
              </td>
              <td data-label="Strength" className="num">
                <span
                  title={`signal_strength ${s.signal_strength} ≥ threshold ${s.minSignalStrength}`}
                >
                  {formatStrength(s.signal_strength)}
                </span>
                <div className="muted small">min {formatStrength(s.minSignalStrength)}</div>
              </td>
              <td data-label="Headline" className="cell-headline">
                {s.headline}
              </td>
              <td data-label="Schedule">
                <Link className="mono small" to={`/schedules/${encodeURIComponent(s.scheduleId)}`}>
                  {s.scheduleId}
                </Link>
              </td>
              <td data-label="Run">
                <Link className="mono small" to={`/runs/${encodeURIComponent(s.runId)}`}>
                  {s.runId}
                </Link>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The signals the owner's schedules emitted, newest first; ?symbol= filters (any spelling). */
export function SignalsPage() {
  const [params, setParams] = useSearchParams();
  const symbol = params.get('symbol') ?? '';
  const now = useNow(15_000);
  const list = useInfiniteQuery({ ...signalListQuery(symbol), refetchInterval: 30_000 });
  const signals = list.data?.pages.flatMap((p) => p.signals) ?? [];
  return (
    <section aria-labelledby="signals-title">
      <div className="page-head">
        <div>
          <h1 id="signals-title">Signals</h1>
          <p className="muted">
            Recommendations of scheduled runs that reached their schedule’s minimum signal strength.
          </p>
        </div>
        <div className="page-head-actions">
          <Link to="/schedules" className="btn">
            Schedules
          </Link>
        </div>
      </div>
      <SymbolFilter
        key={symbol}
        symbol={symbol}
        onChange={(s) => setParams(s === '' ? {} : { symbol: s })}
      />
      {list.isPending && <SkeletonBlock lines={5} label="Loading signals" />}
      {list.isError && (
        <ErrorPanel
          error={list.error}
          title="The signals could not be loaded"
          onRetry={() => void list.refetch()}
        />
      )}
      {list.isSuccess && signals.length === 0 && (
        <EmptyState title={symbol === '' ? 'No signals yet' : `No signals for ${symbol}`}>
          <p className="muted">
            A schedule with a minimum signal strength emits one when a run’s recommendation reaches
            it.
          </p>
        </EmptyState>
      )}
      {signals.length > 0 && <SignalRows signals={signals} now={now} />}
      {list.hasNextPage && (
        <nav className="pager" aria-label="More signals">
          <button
            type="button"
            className="btn"
            disabled={list.isFetchingNextPage}
            onClick={() => void list.fetchNextPage()}
          >
            {list.isFetchingNextPage ? 'Loading…' : 'Show more'}
          </button>
        </nav>
      )}
    </section>
  );
}
