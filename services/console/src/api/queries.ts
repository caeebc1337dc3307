import { queryOptions } from '@tanstack/react-query';
import type { FlowSummary, RunsQuery } from './api-types';
import { api, authorizedFetch, stepPath, unwrap } from './client';
import { apiErrorFrom } from './api-error';

/** Query keys: everything about one run sits under ['run', runId] so one invalidation refreshes it. */
export const queryKeys = {
  runs: ['runs'] as const,
  runList: (query: RunsQuery) => ['runs', query] as const,
  run: (runId: string) => ['run', runId] as const,
  blockedOn: (runId: string, stepId: string) => ['run', runId, 'blocked-on', stepId] as const,
  // Outside ['run', …]: a SUCCEEDED step's artifact never changes, a run event must not refetch it.
  artifact: (runId: string, stepId: string) => ['artifact', runId, stepId] as const,
  flows: ['flows'] as const,
  tokens: ['admin', 'tokens'] as const,
};

export function flowsQuery() {
  return queryOptions({
    queryKey: queryKeys.flows,
    queryFn: async (): Promise<FlowSummary[]> => (await unwrap(api.GET('/flows'))).flows,
    staleTime: 5 * 60_000,
  });
}

export function runQuery(runId: string) {
  return queryOptions({
    queryKey: queryKeys.run(runId),
    queryFn: () => unwrap(api.GET('/runs/{runId}', { params: { path: { runId } } })),
  });
}

export function runListQuery(query: RunsQuery) {
  return queryOptions({
    queryKey: queryKeys.runList(query),
    // `query` is a variable, not a literal: the fields the document does not list yet (symbol)
    // pass through to the URL.
    queryFn: () => unwrap(api.GET('/runs', { params: { query } })),
    placeholderData: (previous) => previous,
  });
}

export function blockedOnQuery(runId: string, stepId: string) {
  return queryOptions({
    queryKey: queryKeys.blockedOn(runId, stepId),
    queryFn: () =>
      unwrap(
        api.GET('/runs/{runId}/steps/{stepId}/blocked-on', { params: { path: { runId, stepId } } }),
      ),
  });
}

export function artifactQuery(runId: string, stepId: string) {
  return queryOptions({
    queryKey: queryKeys.artifact(runId, stepId),
    queryFn: async (): Promise<unknown> =>
      unwrap(
        api.GET('/runs/{runId}/steps/{stepId}/artifact', { params: { path: { runId, stepId } } }),
      ),
    staleTime: Infinity,
    retry: false,
  });
}

/** One file of a step's artifact bundle (a chart PNG) as an object URL the page can show. */
export async function fetchStepFile(
  runId: string,
  stepId: string,
  fileName: string,
): Promise<Blob> {
  const response = await authorizedFetch(
    stepPath(runId, stepId, `files/${encodeURIComponent(fileName)}`),
    {
      headers: { Accept: 'image/png,image/*;q=0.9,*/*;q=0.5' },
    },
  );
  if (!response.ok) {
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: the text itself
    }
    throw apiErrorFrom(response.status, body);
  }
  return response.blob();
}
