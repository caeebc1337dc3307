import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SERVICE_DEPLOYMENTS, type DeployEnvironment } from '../deployment-model';
import { renderDeployFiles } from './deploy-files';
import { defaultRepo, skaffoldConfig, type SkaffoldConfig } from './skaffold-config';

const environments: DeployEnvironment[] = [
  {
    profile: 'dev',
    project: 'acme-tda-dev',
    region: 'europe-west1',
    pubsubPrefix: 'tda',
    artifactsBucket: 'acme-tda-dev-tda-artifacts',
    maxRunningRuns: 5,
    llm: 'gemini-api',
  },
  {
    profile: 'prod',
    project: 'acme-tda-prod',
    region: 'us-central1',
    pubsubPrefix: 'tda',
    artifactsBucket: 'acme-tda-prod-tda-artifacts',
    maxRunningRuns: 20,
    llm: 'gemini-api',
  },
];

describe('skaffold.yaml', () => {
  const rendered = renderDeployFiles(environments, '24.21.0').get('skaffold.yaml') ?? '';
  const config = parse(rendered) as SkaffoldConfig;

  it('is the rendered skaffoldConfig, in schema v4beta14, building linux/amd64 tagged by commit', () => {
    expect(config).toEqual(skaffoldConfig(environments));
    expect(config).toMatchObject({
      apiVersion: 'skaffold/v4beta14',
      kind: 'Config',
      metadata: { name: 'tda' },
      build: { platforms: ['linux/amd64'], tagPolicy: { gitCommit: {} } },
    });
  });

  it('builds one artifact per deployable service from its Dockerfile, with the repo as context', () => {
    expect(config.build.artifacts).toEqual(
      SERVICE_DEPLOYMENTS.map((s) => ({
        image: `tda-${s.project}`,
        context: '.',
        docker: { dockerfile: `services/${s.project}/Dockerfile` },
      })),
    );
  });

  it('binds each profile to its project and region, its manifests and the infra apply hooks', () => {
    expect(config.profiles.map((p) => p.name)).toEqual(['dev', 'prod']);
    for (const [index, environment] of environments.entries()) {
      const apply = ['npx', 'tda', 'infra', 'apply', '--profile', environment.profile];
      expect(config.profiles[index]).toMatchObject({
        manifests: { rawYaml: [`deploy/cloudrun/${environment.profile}/*.yaml`] },
        deploy: {
          cloudrun: {
            projectid: environment.project,
            region: environment.region,
            hooks: { before: [{ command: apply }], after: [{ command: apply }] },
          },
        },
      });
    }
  });

  it('builds prod on Cloud Build in its own project and dev with the local pushing builder', () => {
    const [devProfile, prodProfile] = config.profiles;
    expect(prodProfile?.build).toEqual({ googleCloudBuild: { projectId: 'acme-tda-prod' } });
    expect(devProfile).not.toHaveProperty('build');
    expect(config.build.local.push).toBe(true);
  });

  it('names the image repository of each profile in the header (skaffold --default-repo)', () => {
    expect(defaultRepo(environments[1] as DeployEnvironment)).toBe(
      'us-central1-docker.pkg.dev/acme-tda-prod/tda',
    );
    expect(rendered).toContain(
      '#   skaffold run -p prod --default-repo=us-central1-docker.pkg.dev/acme-tda-prod/tda\n',
    );
    expect(rendered).toContain('skaffold >= 2.19.0');
  });
});
