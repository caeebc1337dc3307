import { STEP_TYPES } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import { parseEnvironments, selectEnvironment } from './deploy-environments';
import {
  DEPLOYABLE_SERVICES,
  PUSH_TARGETS,
  SERVICE_DEPLOYMENTS,
  serviceDeployment,
  type DeployEnvironment,
} from './deployment-model';
import { InfraError } from './infra.errors';

const env: DeployEnvironment = {
  profile: 'prod',
  project: 'acme-tda-prod',
  region: 'europe-west1',
  pubsubPrefix: 'tda',
  artifactsBucket: 'acme-tda-prod-tda-artifacts',
  maxRunningRuns: 20,
};

describe('deployment model', () => {
  it('describes every deployable service exactly once, named tda-<project>', () => {
    expect(SERVICE_DEPLOYMENTS.map((s) => s.project).sort()).toEqual(
      [...DEPLOYABLE_SERVICES].sort(),
    );
    for (const s of SERVICE_DEPLOYMENTS) {
      expect(s.name).toBe(`tda-${s.project}`);
      // service account ids are 6..30 characters
      expect(s.name.length).toBeLessThanOrEqual(30);
    }
  });

  it('gives push workers the push ingress env and pull/private services none', () => {
    for (const { service } of PUSH_TARGETS) {
      const d = serviceDeployment(service);
      expect(d.kind).toBe('Service');
      expect(d.ingress).toBe('pubsub-push');
      expect(d.env(env)).toMatchObject({
        TDA_INGRESS: 'push',
        TDA_PUSH_AUDIENCE: d.name,
        TDA_PUSH_SERVICE_ACCOUNT: 'tda-pubsub-push@acme-tda-prod.iam.gserviceaccount.com',
      });
    }
    expect(serviceDeployment('worker-llm-report')).toMatchObject({
      kind: 'WorkerPool',
      ingress: 'pubsub-pull',
      cpuAlwaysAllocated: true,
    });
    expect(serviceDeployment('orchestrator').env(env)).not.toHaveProperty('TDA_INGRESS');
  });

  it('runs every service against GCP with the environment project, prefix and bucket', () => {
    for (const s of SERVICE_DEPLOYMENTS) {
      expect(s.env(env)).toMatchObject({
        TDA_BACKEND: 'gcp',
        GOOGLE_CLOUD_PROJECT: 'acme-tda-prod',
        TDA_PUBSUB_PREFIX: 'tda',
        TDA_ARTIFACTS_BUCKET: 'acme-tda-prod-tda-artifacts',
      });
      // secrets never appear as plain env
      for (const secret of s.secrets) expect(s.env(env)).not.toHaveProperty(secret.env);
    }
  });

  it('grants each service account only resource roles with a reason, and access to its own secrets', () => {
    for (const s of SERVICE_DEPLOYMENTS) {
      const roles = s.roles(env);
      expect(roles.every((r) => r.reason.length > 0)).toBe(true);
      expect(roles.some((r) => r.role === 'roles/owner' || r.role === 'roles/editor')).toBe(false);
      const secretGrants = roles
        .filter((r) => r.role === 'roles/secretmanager.secretAccessor')
        .map((r) => (r.resource.type === 'secret' ? r.resource.name : ''));
      expect(secretGrants.sort()).toEqual(s.secrets.map((x) => x.secret).sort());
    }
    const orchestratorTopics = serviceDeployment('orchestrator')
      .roles(env)
      .filter((r) => r.role === 'roles/pubsub.publisher');
    expect(orchestratorTopics).toHaveLength(STEP_TYPES.length);
  });
});

describe('deploy environments', () => {
  it('parses profiles with defaults and selects by profile or project', () => {
    const envs = parseEnvironments({
      dev: { project: 'acme-tda-dev', region: 'europe-west1' },
      prod: { project: 'acme-tda-prod', region: 'us-central1', maxRunningRuns: 50 },
    });
    expect(envs).toEqual([
      {
        profile: 'dev',
        project: 'acme-tda-dev',
        region: 'europe-west1',
        pubsubPrefix: 'tda',
        artifactsBucket: 'acme-tda-dev-tda-artifacts',
        maxRunningRuns: 20,
      },
      {
        profile: 'prod',
        project: 'acme-tda-prod',
        region: 'us-central1',
        pubsubPrefix: 'tda',
        artifactsBucket: 'acme-tda-prod-tda-artifacts',
        maxRunningRuns: 50,
      },
    ]);
    expect(selectEnvironment(envs, { project: 'acme-tda-prod' }).profile).toBe('prod');
    expect(selectEnvironment(envs, { profile: 'dev' }).project).toBe('acme-tda-dev');
    expect(() => selectEnvironment(envs, { project: 'other-project' })).toThrow(InfraError);
  });

  it('refuses an invalid file with every issue listed', () => {
    let error: unknown;
    try {
      parseEnvironments({ prod: { project: 'X', region: 'nowhere' } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InfraError);
    expect((error as InfraError).details['issues']).toEqual([
      expect.stringContaining('prod.project'),
      expect.stringContaining('prod.region'),
    ]);
  });
});
