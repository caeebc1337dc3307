import { infiniteQueryOptions, queryOptions } from '@tanstack/react-query';
import type {
  BacktestJob,
  BacktestJobPage,
  BacktestJobState,
  BacktestTop,
  BacktestTopItem,
  BacktestTrade,
} from '@tda/contracts';
import { api, unwrap } from './client';

/*
 * Backtest jobs (seed 003): GET /backtests/jobs, /backtests/jobs/{jobId}, …/top and POST …/cancel
 * through the typed client. The OpenAPI document abridges the nested objects (progress, hashes,
 * the top items) to plain objects, so the answers are read through the contracts' generated types
 * (contracts/backtest_job.schema.json; type-only: nothing of the server reaches the bundle).
 */

export type { BacktestJob, BacktestJobPage, BacktestJobState, BacktestTop, BacktestTopItem };
export type { BacktestTrade };

const PAGE_SIZE = 25;

// Same JSON: the document's schemas are the contract's with the nested objects left open.
const asJob = (job: unknown): BacktestJob => job as BacktestJob;

export const backtestsApi = {
  list: async (state: BacktestJobState | '', cursor?: string): Promise<BacktestJobPage> => {
    const page = await unwrap(
      api.GET('/backtests/jobs', {
        params: {
          query: {
            limit: PAGE_SIZE,
            ...(state === '' ? {} : { state }),
            ...(cursor === undefined ? {} : { cursor }),
          },
        },
      }),
    );
    return { items: page.items.map(asJob), next_cursor: page.next_cursor };
  },
  get: async (jobId: string): Promise<BacktestJob> =>
    asJob(await unwrap(api.GET('/backtests/jobs/{jobId}', { params: { path: { jobId } } }))),
  /** Without a limit the API answers its maximum: every persisted variant. */
  top: async (jobId: string): Promise<BacktestTop> =>
    (await unwrap(
      api.GET('/backtests/jobs/{jobId}/top', { params: { path: { jobId } } }),
    )) as unknown as BacktestTop,
  /** Idempotent: a queued job is cancelled at once, a running one at its next batch boundary. */
  cancel: async (jobId: string): Promise<BacktestJob> =>
    asJob(
      await unwrap(api.POST('/backtests/jobs/{jobId}/cancel', { params: { path: { jobId } } })),
    ),
};

/** Everything about backtests sits under ['backtests'] so one invalidation refreshes it all. */
export const backtestKeys = {
  all: ['backtests'] as const,
  list: (state: BacktestJobState | '') => ['backtests', 'list', state] as const,
  job: (jobId: string) => ['backtests', 'job', jobId] as const,
  /** By state too: a job that turns succeeded asks for its result at once (a new key). */
  top: (jobId: string, state?: BacktestJobState) =>
    state === undefined
      ? (['backtests', 'top', jobId] as const)
      : (['backtests', 'top', jobId, state] as const),
};

export function backtestJobsQuery(state: BacktestJobState | '') {
  return infiniteQueryOptions({
    queryKey: backtestKeys.list(state),
    queryFn: ({ pageParam }) => backtestsApi.list(state, pageParam),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page: BacktestJobPage) => page.next_cursor ?? undefined,
  });
}

export function backtestJobQuery(jobId: string) {
  return queryOptions({
    queryKey: backtestKeys.job(jobId),
    queryFn: () => backtestsApi.get(jobId),
  });
}

export function backtestTopQuery(jobId: string, state: BacktestJobState) {
  return queryOptions({
    queryKey: backtestKeys.top(jobId, state),
    queryFn: () => backtestsApi.top(jobId),
  });
}
