import createClient, { type Middleware } from 'openapi-fetch';
import { getToken } from '../auth/token-store';
import { apiErrorFrom } from './api-error';
import type { paths } from './schema.gen';

/** Where the API is: the console is served by the orchestrator, so the page's own origin. */
function defaultBaseUrl(): string {
  return globalThis.location?.origin ?? 'http://localhost';
}

export interface ApiClientOptions {
  /** The bearer token of each request; null sends none (IAP authenticates the browser). */
  token?: () => string | null;
  baseUrl?: string;
}

/**
 * The typed API client (openapi-fetch over the generated paths). Every request asks for JSON —
 * the orchestrator answers a browser navigation (Accept: text/html) with the console itself —
 * and carries `Authorization: Bearer <token>` when there is one.
 */
export function createApiClient(options: ApiClientOptions = {}) {
  const token = options.token ?? getToken;
  const client = createClient<paths>({ baseUrl: options.baseUrl ?? defaultBaseUrl() });
  const auth: Middleware = {
    onRequest({ request }) {
      request.headers.set('Accept', 'application/json');
      const value = token();
      if (value !== null && !request.headers.has('Authorization')) {
        request.headers.set('Authorization', `Bearer ${value}`);
      }
      return request;
    },
  };
  client.use(auth);
  return client;
}

export type ApiClient = ReturnType<typeof createApiClient>;

/** The shared client of the app (reads the signed-in token on every request). */
export const api: ApiClient = createApiClient();

interface ApiResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The data of a successful answer; an ApiError (code + message) otherwise. */
export async function unwrap<T>(call: Promise<ApiResult<T>>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw apiErrorFrom(response.status, error);
  return data as T;
}

/**
 * A raw authorized request, for what openapi-fetch cannot type: binary files (chart PNGs, which
 * an <img src> could not fetch with the Authorization header) and event streams.
 */
export async function authorizedFetch(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  const token = getToken();
  if (token !== null) headers.set('Authorization', `Bearer ${token}`);
  return fetch(new URL(path, defaultBaseUrl()), { ...init, headers });
}

/** `/runs/{runId}/steps/{stepId}/…` with each segment encoded (step ids contain ':'). */
export function stepPath(runId: string, stepId: string, rest: string): string {
  return `/runs/${encodeURIComponent(runId)}/steps/${encodeURIComponent(stepId)}/${rest}`;
}
