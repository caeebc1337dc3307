import {
  IMAGE_REPOSITORY,
  SERVICE_DEPLOYMENTS,
  type DeployEnvironment,
  type ServiceDeployment,
} from '../deployment-model';
import { imageName } from './cloud-run-manifest';

/**
 * skaffold.yaml as data. One artifact per deployable service, one profile per environment of
 * deploy/environments.json. The top-level pipeline builds only (locally, for any profile that
 * does not say otherwise); each profile adds its manifests, its Cloud Run project and region, and
 * the `tda infra apply` hooks around the deploy. Profiles overlay field by field: a profile's
 * `googleCloudBuild` replaces the top-level `local` builder (they are one-of), its
 * `manifests.rawYaml` and `deploy.cloudrun` are its own.
 */

/** The schema skaffold.yaml is written in; skaffold reads it from 2.19.0 on. */
export const SKAFFOLD_API_VERSION = 'skaffold/v4beta14';
export const SKAFFOLD_MIN_VERSION = '2.19.0';
/** Cloud Run runs linux/amd64; building it explicitly keeps Apple Silicon laptops correct. */
export const BUILD_PLATFORMS = ['linux/amd64'] as const;
/** The profile built with Cloud Build (no local Docker needed); others build locally. */
export const CLOUD_BUILD_PROFILES: readonly string[] = ['prod'];

export function manifestsDir(profile: string): string {
  return `deploy/cloudrun/${profile}`;
}

export function manifestPath(profile: string, deployment: Pick<ServiceDeployment, 'name'>): string {
  return `${manifestsDir(profile)}/${deployment.name}.yaml`;
}

export function dockerfilePath(deployment: Pick<ServiceDeployment, 'project'>): string {
  return `services/${deployment.project}/Dockerfile`;
}

/** Where skaffold pushes: the value of `--default-repo` / SKAFFOLD_DEFAULT_REPO for a profile. */
export function defaultRepo(environment: DeployEnvironment): string {
  return `${environment.region}-docker.pkg.dev/${environment.project}/${IMAGE_REPOSITORY}`;
}

/** The hook command run before and after the deploy (idempotent: apply twice changes nothing). */
export function infraApplyCommand(profile: string): string[] {
  return ['npx', 'tda', 'infra', 'apply', '--profile', profile];
}

export interface SkaffoldArtifact {
  image: string;
  context: string;
  docker: { dockerfile: string };
}

export interface SkaffoldProfile {
  name: string;
  build?: { googleCloudBuild: { projectId: string } };
  manifests: { rawYaml: string[] };
  deploy: {
    cloudrun: {
      projectid: string;
      region: string;
      hooks: { before: { command: string[] }[]; after: { command: string[] }[] };
    };
  };
}

export interface SkaffoldConfig {
  apiVersion: string;
  kind: 'Config';
  metadata: { name: string };
  build: {
    platforms: string[];
    tagPolicy: { gitCommit: Record<string, never> };
    artifacts: SkaffoldArtifact[];
    local: { push: boolean; useBuildkit: boolean };
  };
  profiles: SkaffoldProfile[];
}

function profile(environment: DeployEnvironment): SkaffoldProfile {
  const apply = infraApplyCommand(environment.profile);
  return {
    name: environment.profile,
    ...(CLOUD_BUILD_PROFILES.includes(environment.profile)
      ? { build: { googleCloudBuild: { projectId: environment.project } } }
      : {}),
    manifests: { rawYaml: [`${manifestsDir(environment.profile)}/*.yaml`] },
    deploy: {
      cloudrun: {
        projectid: environment.project,
        region: environment.region,
        hooks: {
          // Topics, subscriptions, service accounts, IAM, bucket and secrets exist before a
          // worker starts consuming.
          before: [{ command: apply }],
          // Now that the Services have URLs: push endpoints, run.invoker grants, scheduler.
          after: [{ command: apply }],
        },
      },
    },
  };
}

export function skaffoldConfig(environments: readonly DeployEnvironment[]): SkaffoldConfig {
  return {
    apiVersion: SKAFFOLD_API_VERSION,
    kind: 'Config',
    metadata: { name: 'tda' },
    build: {
      platforms: [...BUILD_PLATFORMS],
      tagPolicy: { gitCommit: {} },
      artifacts: SERVICE_DEPLOYMENTS.map((deployment) => ({
        image: imageName(deployment),
        // The repository root: every Dockerfile builds its service from the NX workspace.
        context: '.',
        docker: { dockerfile: dockerfilePath(deployment) },
      })),
      // Cloud Run pulls from Artifact Registry: a local build is pushed to --default-repo.
      local: { push: true, useBuildkit: true },
    },
    profiles: environments.map(profile),
  };
}
