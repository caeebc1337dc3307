import { InfraError } from '../../infra.errors';
import type { GcpRestClient } from '../gcp-rest.client';
import { gcpCall } from '../gcp-call';

interface ResourceManagerProject {
  projectId?: string;
  projectNumber?: string;
  lifecycleState?: string;
}

/**
 * The project's number (Resource Manager v1): Google-managed service agents are named after it,
 * not after the project id — see pubsubServiceAgentEmail. A read, so it also runs in dry runs.
 */
export async function getProjectNumber(client: GcpRestClient, project: string): Promise<string> {
  const response = await gcpCall<ResourceManagerProject>(
    client,
    { method: 'GET', url: `https://cloudresourcemanager.googleapis.com/v1/projects/${project}` },
    'resourcemanager.projects.get (e.g. roles/browser or roles/viewer)',
  );
  const number = response.data.projectNumber;
  if (response.status === 404 || typeof number !== 'string' || !/^[0-9]+$/.test(number)) {
    throw new InfraError(
      `project ${project} was not found (or has no project number): check deploy/environments.json and gcloud auth`,
      { details: { project, status: response.status }, code: 'NOT_FOUND' },
    );
  }
  if (response.data.lifecycleState !== undefined && response.data.lifecycleState !== 'ACTIVE') {
    throw new InfraError(`project ${project} is ${response.data.lifecycleState}, not ACTIVE`, {
      details: { project, lifecycleState: response.data.lifecycleState },
      code: 'INVALID_REQUEST',
    });
  }
  return number;
}

/**
 * The Pub/Sub service agent: it writes to dead-letter topics, acks on the source subscription
 * and mints push OIDC tokens, so those grants name it.
 */
export function pubsubServiceAgentEmail(projectNumber: string): string {
  return `service-${projectNumber}@gcp-sa-pubsub.iam.gserviceaccount.com`;
}
