import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useMemo, useRef } from 'react';
import { Link, useLocation, useNavigate, useSearchParams } from 'react-router';
import type { RunsQuery, RunStatus } from '../../api/api-types';
import { flowsQuery, queryKeys, runListQuery } from '../../api/queries';
import { useSession } from '../../auth/session';
import { pollWhileNotLive, useEventStream } from '../../live/use-event-stream';
import { RUN_STATUS_OPTIONS } from '../../model/status';
import { EmptyState } from '../../ui/empty-state';
import { ErrorPanel } from '../../ui/error-panel';
import { LiveIndicator } from '../../ui/live-indicator';
import { useNow } from '../../ui/time';
import { RunsFilters, type RunFilters } from './runs-filters';
import { RunsTable, RunsTableSkeleton } from './runs-table';

const PAGE_SIZE = 25;

function filtersOf(params: URLSearchParams): RunFilters {
  const status = params.get('status') ?? '';
  return {
    flowKey: params.get('flowKey') ?? '',
    status: (RUN_STATUS_OPTIONS as string[]).includes(status) ? (status as RunStatus) : '',
    symbol: params.get('symbol') ?? '',
  };
}

/** Previous pages' cursors ride in the history entry: Back and "Previous" both work. */
function cursorStack(state: unknown): string[] {
  const stack = (state as { cursors?: unknown } | null)?.cursors;
  return Array.isArray(stack) ? stack.filter((c): c is string => typeof c === 'string') : [];
}

/** Throttles event-driven refetches: a burst of step events costs one list request. */
function useThrottled(fn: () => void, ms: number): () => void {
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  return useCallback(() => {
    if (timer.current !== undefined) return;
    timer.current = setTimeout(() => {
      timer.current = undefined;
      fn();
    }, ms);
  }, [fn, ms]);
}

export function RunsListPage() {
  const [params] = useSearchParams();
  const location = useLocation();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const { expire } = useSession();
  const filters = filtersOf(params);
  const cursor = params.get('cursor') ?? undefined;
  const stack = cursorStack(location.state);
  // After a reload the history entry has no stack: the page number is unknown.
  const knownPage = cursor === undefined || location.state !== null;

  const query = useMemo((): RunsQuery => {
    const q: RunsQuery = { limit: PAGE_SIZE };
    if (cursor !== undefined) q.cursor = cursor;
    if (filters.flowKey !== '') q.flowKey = filters.flowKey;
    if (filters.status !== '') q.status = filters.status;
    if (filters.symbol !== '') q.symbol = filters.symbol;
    return q;
  }, [cursor, filters.flowKey, filters.status, filters.symbol]);

  const refresh = useThrottled(
    useCallback(
      () => void queryClient.invalidateQueries({ queryKey: queryKeys.runs }),
      [queryClient],
    ),
    750,
  );
  const stream = useEventStream('/events/stream', refresh, { onUnauthorized: expire });
  const runs = useQuery({ ...runListQuery(query), refetchInterval: pollWhileNotLive(stream) });
  const flows = useQuery(flowsQuery());
  const now = useNow(5_000);

  const go = (next: RunFilters, nextCursor?: string, cursors: string[] = []): void => {
    const search = new URLSearchParams();
    if (next.flowKey !== '') search.set('flowKey', next.flowKey);
    if (next.status !== '') search.set('status', next.status);
    if (next.symbol !== '') search.set('symbol', next.symbol);
    if (nextCursor !== undefined) search.set('cursor', nextCursor);
    void navigate({ search: search.toString() }, { state: { cursors } });
  };

  const page = runs.data;
  const filtered = filters.flowKey !== '' || filters.status !== '' || filters.symbol !== '';
  return (
    <section aria-labelledby="runs-title">
      <div className="page-head">
        <div>
          <h1 id="runs-title">Runs</h1>
          <p className="muted">Every run you can see, newest first.</p>
        </div>
        <div className="page-head-actions">
          <LiveIndicator state={stream} />
          <Link to="/trigger" className="btn btn-primary">
            Trigger a run
          </Link>
        </div>
      </div>
      <RunsFilters
        key={filters.symbol}
        filters={filters}
        flows={flows.data}
        onChange={(next) => go(next)}
      />
      {runs.isPending && <RunsTableSkeleton />}
      {runs.isError && (
        <ErrorPanel
          error={runs.error}
          title="The runs could not be loaded"
          onRetry={() => void runs.refetch()}
        />
      )}
      {page !== undefined && page.runs.length === 0 && (
        <EmptyState title={filtered ? 'No runs match these filters' : 'No runs yet'}>
          {filtered ? (
            <button
              type="button"
              className="btn"
              onClick={() => go({ flowKey: '', status: '', symbol: '' })}
            >
              Clear filters
            </button>
          ) : (
            <Link to="/trigger" className="btn btn-primary">
              Trigger your first run
            </Link>
          )}
        </EmptyState>
      )}
      {page !== undefined && page.runs.length > 0 && <RunsTable runs={page.runs} now={now} />}
      {page !== undefined && (cursor !== undefined || page.nextCursor !== null) && (
        <nav className="pager" aria-label="Pages">
          <button
            type="button"
            className="btn"
            disabled={cursor === undefined}
            onClick={() => go(filters, stack[stack.length - 1], stack.slice(0, -1))}
          >
            {knownPage ? 'Previous' : 'First page'}
          </button>
          <span className="muted small" aria-live="polite">
            {knownPage ? `Page ${cursor === undefined ? 1 : stack.length + 2}` : ''}
          </span>
          <button
            type="button"
            className="btn"
            disabled={page.nextCursor === null || page.nextCursor === undefined}
            onClick={() =>
              page.nextCursor != null &&
              go(filters, page.nextCursor, cursor === undefined ? [] : [...stack, cursor])
            }
          >
            Next
          </button>
        </nav>
      )}
    </section>
  );
}
