import type { DeployEnvironment } from '../../deployment-model';
import { InfraError } from '../../infra.errors';
import type { GcpRestClient } from '../gcp-rest.client';
import { gcpCall } from '../gcp-call';

interface RunServiceResource {
  uri?: string;
}

/** Run Admin v2 resource URL of a Cloud Run Service. */
export function runServiceUrl(environment: DeployEnvironment, name: string): string {
  return `https://run.googleapis.com/v2/projects/${environment.project}/locations/${environment.region}/services/${name}`;
}

/**
 * The URL (`https://<name>-<hash>.<region>.run.app`) of a Cloud Run Service, or null when it is
 * not deployed yet. A read: runs in dry runs too. The Services are deployed by skaffold, not by
 * infra apply, so the first apply (before the first `skaffold run`) finds none of them.
 */
export async function lookupRunServiceUrl(
  client: GcpRestClient,
  environment: DeployEnvironment,
  name: string,
): Promise<string | null> {
  const response = await gcpCall<RunServiceResource>(
    client,
    { method: 'GET', url: runServiceUrl(environment, name) },
    'roles/run.viewer',
  );
  if (response.status === 404) return null;
  const uri = response.data.uri;
  // A Service exists with a URL from its creation on; none would be an API change.
  if (typeof uri !== 'string' || !uri.startsWith('https://')) {
    throw new InfraError(`Cloud Run service ${name} has no https uri`, {
      details: { service: name },
    });
  }
  return uri.replace(/\/+$/, '');
}

/** lookupRunServiceUrl for each name: name → URL, or null when not deployed. */
export async function lookupRunServiceUrls(
  client: GcpRestClient,
  environment: DeployEnvironment,
  names: readonly string[],
): Promise<Map<string, string | null>> {
  const urls = new Map<string, string | null>();
  for (const name of new Set(names)) {
    urls.set(name, await lookupRunServiceUrl(client, environment, name));
  }
  return urls;
}

/** The note of everything that waits for a Service skaffold has not deployed yet. */
export const NOT_DEPLOYED_NOTE = 'service not deployed (run infra apply again after skaffold run)';
