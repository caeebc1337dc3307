import { IMAGE_REPOSITORY, type DeployEnvironment } from '../../deployment-model';
import type { ApplyOptions, InfraPlanItem } from '../../plan';
import type { GcpRestClient } from '../gcp-rest.client';
import { createMissing, gcpCall } from '../gcp-call';

interface RepositoryResource {
  format?: string;
}

const NEEDED_ROLE = 'roles/artifactregistry.admin';

/** `<region>-docker.pkg.dev/<project>/tda`: where skaffold pushes the images. */
export function imageRepositoryHost(environment: DeployEnvironment): string {
  return `${environment.region}-docker.pkg.dev/${environment.project}/${IMAGE_REPOSITORY}`;
}

/**
 * The Artifact Registry docker repository IMAGE_REPOSITORY in the region. Creation returns a
 * long-running Operation that is not polled: the repository is reported `create` as soon as the
 * request is accepted (it is usable seconds later, long before the first image push). Only the
 * format is checked on an existing repository; a non-DOCKER one cannot be converted and is
 * `skip` with a note. The description is set at creation only.
 */
export async function applyImageRepository(
  client: GcpRestClient,
  environment: DeployEnvironment,
  options: ApplyOptions,
): Promise<InfraPlanItem[]> {
  return [await applyRepository(client, environment, options)];
}

async function applyRepository(
  client: GcpRestClient,
  environment: DeployEnvironment,
  options: ApplyOptions,
): Promise<InfraPlanItem> {
  const base = `https://artifactregistry.googleapis.com/v1/projects/${environment.project}/locations/${environment.region}/repositories`;
  const item = { kind: 'artifact-registry-repository', name: imageRepositoryHost(environment) };
  const current = await gcpCall<RepositoryResource>(
    client,
    { method: 'GET', url: `${base}/${IMAGE_REPOSITORY}` },
    NEEDED_ROLE,
  );

  if (current.status === 404) {
    return createMissing(
      client,
      {
        method: 'POST',
        url: base,
        params: { repositoryId: IMAGE_REPOSITORY },
        body: { format: 'DOCKER', description: 'TDA service images (managed by tda infra apply)' },
      },
      NEEDED_ROLE,
      options,
      item,
      // 409: a previous apply's create operation still running (GET does not see it yet).
      {
        created: 'long-running operation, not awaited',
        conflict: 'already exists (creation in progress)',
      },
    );
  }

  if (current.data.format !== 'DOCKER') {
    return {
      ...item,
      action: 'skip',
      changes: [{ field: 'format', from: current.data.format, to: 'DOCKER' }],
      note: `repository ${IMAGE_REPOSITORY} exists with another format and cannot be converted: images cannot be pushed to it`,
    };
  }
  return { ...item, action: 'unchanged', changes: [] };
}
