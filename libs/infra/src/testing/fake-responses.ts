import type { GcpRestRequest, GcpRestResponse } from '../gcp/gcp-rest.client';
import type { FakeRouteContext } from './fake-gcp-api';

/** Route-building pieces shared by the FakeGcpApi route modules (identity, platform). */

/** One path segment (a project, a location, a bucket). */
export const SEG = '([^/]+)';
/** A resource id: one segment that stops before a `:method` suffix (`:getIamPolicy`). */
export const NAME = '([^/:]+)';

export function ok(data: unknown): GcpRestResponse {
  return { status: 200, data };
}

/** A Google API error body (`{error: {code, message, status}}`), as the real APIs answer. */
export function apiError(status: number, grpcStatus: string, message: string): GcpRestResponse {
  return { status, data: { error: { code: status, message, status: grpcStatus } } };
}

export function notFound(what: string): GcpRestResponse {
  return apiError(404, 'NOT_FOUND', `${what} not found`);
}

/** The stored resource (200), or a 404 naming `what`. */
export function okOrNotFound(resource: unknown, what: string): GcpRestResponse {
  return resource === undefined ? notFound(what) : ok(resource);
}

export function bodyOf<T = Record<string, unknown>>(request: GcpRestRequest): Partial<T> {
  return (request.body ?? {}) as Partial<T>;
}

/** The matched path's `index`-th group ('' when absent). */
export function group(context: FakeRouteContext, index: number): string {
  return context.groups[index] ?? '';
}
