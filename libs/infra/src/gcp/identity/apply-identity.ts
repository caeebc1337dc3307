import type { DeployEnvironment } from '../../deployment-model';
import type { ApplyOptions, InfraPlanItem } from '../../plan';
import type { GcpRestClient } from '../gcp-rest.client';
import { applyArtifactsBucket } from './artifacts-bucket';
import { applyImageRepository } from './image-repository';
import { applySecretContainers } from './secret-containers';
import { applyServiceAccounts } from './service-accounts';

/**
 * The identity and storage resources, in dependency order: service accounts, the artifacts
 * bucket, the secret containers and the image repository. IAM bindings are separate
 * (applyServiceIamBindings) because they also need the Pub/Sub resources: an apply runs these,
 * then the platform resources, then the bindings.
 */
export async function applyIdentityResources(
  client: GcpRestClient,
  environment: DeployEnvironment,
  options: ApplyOptions,
): Promise<InfraPlanItem[]> {
  return [
    ...(await applyServiceAccounts(client, environment, options)),
    ...(await applyArtifactsBucket(client, environment, options)),
    ...(await applySecretContainers(client, environment, options)),
    ...(await applyImageRepository(client, environment, options)),
  ];
}
