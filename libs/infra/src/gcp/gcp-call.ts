import type { ApplyOptions, InfraPlanItem } from '../plan';
import { GcpApiError, type GcpRestClient, type GcpRestRequest } from './gcp-rest.client';

/**
 * A REST call whose permission failure says which role the deploying identity lacks: a bare
 * "HTTP 403 PERMISSION_DENIED" on a URL is the most common first-apply failure and the least
 * actionable one. Still a GcpApiError (same status and request), only the text is extended.
 */
export async function gcpCall<T>(
  client: GcpRestClient,
  request: GcpRestRequest,
  neededRole: string,
): Promise<{ status: number; data: T }> {
  try {
    return await client.request<T>(request);
  } catch (error) {
    if (error instanceof GcpApiError && error.status === 403) {
      throw withHint(error, `the identity running tda infra apply needs ${neededRole}`);
    }
    if (error instanceof GcpApiError && error.status === 401) {
      throw withHint(error, 'no valid credentials: gcloud auth application-default login');
    }
    throw error;
  }
}

/** The same error with `hint` appended to the API's message. */
export function withHint(error: GcpApiError, hint: string): GcpApiError {
  const prefix = `${error.request.method} ${error.request.url} failed with HTTP ${error.status}: `;
  const apiMessage = error.message.startsWith(prefix)
    ? error.message.slice(prefix.length)
    : error.message;
  return new GcpApiError(error.status, error.request, `${apiMessage} (${hint})`);
}

export function isGcpStatus(error: unknown, ...statuses: number[]): error is GcpApiError {
  return error instanceof GcpApiError && statuses.includes(error.status);
}

/**
 * The create branch of a reconciler whose read found nothing (404): the create request, unless
 * this is a dry run. A 409 means the resource appeared between our read and our create (a
 * concurrent apply, or a previous apply's create operation still running): it exists, which is
 * the goal, so it is reported `unchanged` with `notes.conflict`.
 */
export async function createMissing(
  client: GcpRestClient,
  request: GcpRestRequest,
  neededRole: string,
  options: ApplyOptions,
  item: Pick<InfraPlanItem, 'kind' | 'name'>,
  notes: { created?: string; conflict: string },
): Promise<InfraPlanItem> {
  if (!options.dryRun) {
    try {
      await gcpCall(client, request, neededRole);
    } catch (error) {
      if (!isGcpStatus(error, 409)) throw error;
      return { ...item, action: 'unchanged', changes: [], note: notes.conflict };
    }
  }
  return {
    ...item,
    action: 'create',
    changes: [],
    ...(notes.created === undefined ? {} : { note: notes.created }),
  };
}
