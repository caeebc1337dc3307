import {
  SERVICE_DEPLOYMENTS,
  serviceAccountEmail,
  type DeployEnvironment,
} from '../../deployment-model';
import type { ApplyOptions, InfraPlanItem } from '../../plan';
import type { GcpRestClient } from '../gcp-rest.client';
import {
  applyIamBindings,
  serviceAccountMember,
  type IamApplyTuning,
  type IamBinding,
} from './iam-bindings';

/** Every service's least-privilege roles (ServiceDeployment.roles) for its own service account. */
export function desiredServiceIamBindings(environment: DeployEnvironment): IamBinding[] {
  return SERVICE_DEPLOYMENTS.flatMap((service) => {
    const member = serviceAccountMember(serviceAccountEmail(service.name, environment.project));
    return service.roles(environment).map((role) => ({
      resource: role.resource,
      role: role.role,
      member,
      reason: `${service.name} ${role.reason}`,
    }));
  });
}

/** applyIamBindings over desiredServiceIamBindings. */
export function applyServiceIamBindings(
  client: GcpRestClient,
  environment: DeployEnvironment,
  options: ApplyOptions,
  tuning?: IamApplyTuning,
): Promise<InfraPlanItem[]> {
  return applyIamBindings(
    client,
    environment,
    desiredServiceIamBindings(environment),
    options,
    tuning,
  );
}
