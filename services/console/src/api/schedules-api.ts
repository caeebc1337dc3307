import { infiniteQueryOptions, queryOptions } from '@tanstack/react-query';
import type { FlowSchedule, FlowScheduleRequest, Signal } from '@tda/contracts';
import { apiErrorFrom } from './api-error';
import { authorizedFetch } from './client';

/*
 * Schedules and signals (flow 7). Typed with the contracts' generated types (type-only imports)
 * and called through authorizedFetch until the generated schema.gen.ts lists these paths; then
 * these functions can move onto the typed client without their callers changing.
 */

/** A schedule as the API answers it: the document and, for one schedule, its next 5 fire times. */
export interface ScheduleView extends FlowSchedule {
  /** None while paused; list entries may lack it (nextSlotAt is the next fire then). */
  nextFireTimes?: string[];
}

export interface ScheduleListPage {
  schedules: ScheduleView[];
  nextCursor: string | null;
}

/** POST /schedules/{scheduleId}/fire: the slot's one run. */
export interface ScheduleFireResult {
  scheduleId: string;
  slotAt: string;
  runId: string;
  /** false: the slot had been fired before (its existing run). */
  created: boolean;
}

export interface SignalListPage {
  signals: Signal[];
  nextCursor: string | null;
}

export type { FlowScheduleRequest, Signal };

const PAGE_SIZE = 25;

/** One JSON call: the parsed answer, or the ApiError of a failed one (401 ends the session). */
async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await authorizedFetch(path, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // not JSON (a proxy page): the text itself
  }
  if (!response.ok) throw apiErrorFrom(response.status, parsed);
  return parsed as T;
}

const schedulePath = (scheduleId: string, rest = ''): string =>
  `/schedules/${encodeURIComponent(scheduleId)}${rest}`;

function withQuery(path: string, query: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== '') search.set(key, String(value));
  }
  return search.size === 0 ? path : `${path}?${search.toString()}`;
}

export const schedulesApi = {
  create: (body: FlowScheduleRequest) => call<ScheduleView>('POST', '/schedules', body),
  list: (cursor?: string) =>
    call<ScheduleListPage>('GET', withQuery('/schedules', { limit: PAGE_SIZE, cursor })),
  get: (scheduleId: string) => call<ScheduleView>('GET', schedulePath(scheduleId)),
  setState: (scheduleId: string, action: 'pause' | 'resume') =>
    call<ScheduleView>('POST', schedulePath(scheduleId, `/${action}`)),
  remove: (scheduleId: string) => call<undefined>('DELETE', schedulePath(scheduleId)),
  /** Now (the current minute's slot); the same slot again answers its existing run. */
  fire: (scheduleId: string) =>
    call<ScheduleFireResult>('POST', schedulePath(scheduleId, '/fire'), {}),
  signals: (symbol: string, cursor?: string) =>
    call<SignalListPage>(
      'GET',
      withQuery('/signals', {
        symbol: symbol === '' ? undefined : symbol,
        limit: PAGE_SIZE,
        cursor,
      }),
    ),
};

/** Everything about schedules sits under ['schedules'] so one invalidation refreshes it all. */
export const scheduleKeys = {
  all: ['schedules'] as const,
  list: ['schedules', 'list'] as const,
  one: (scheduleId: string) => ['schedules', 'one', scheduleId] as const,
  signals: (symbol: string) => ['signals', symbol] as const,
};

export function scheduleListQuery() {
  return infiniteQueryOptions({
    queryKey: scheduleKeys.list,
    queryFn: ({ pageParam }) => schedulesApi.list(pageParam),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page: ScheduleListPage) => page.nextCursor ?? undefined,
  });
}

export function scheduleQuery(scheduleId: string) {
  return queryOptions({
    queryKey: scheduleKeys.one(scheduleId),
    queryFn: () => schedulesApi.get(scheduleId),
  });
}

export function signalListQuery(symbol: string) {
  return infiniteQueryOptions({
    queryKey: scheduleKeys.signals(symbol),
    queryFn: ({ pageParam }) => schedulesApi.signals(symbol, pageParam),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page: SignalListPage) => page.nextCursor ?? undefined,
  });
}
