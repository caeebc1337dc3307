import { STEP_TYPES } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import { parseEnvironments, selectEnvironment } from './deploy-environments';
import {
  DEPLOYABLE_SERVICES,
  PUSH_TARGETS,
  SECRETS,
  SERVICE_DEPLOYMENTS,
  referencedSecrets,
  serviceDeployment,
  type DeployEnvironment,
} from './deployment-model';
import { InfraError } from './infra.errors';
import { llmWorkerDeployments, testEnvironment } from './testing';

const env = testEnvironment('prod');
const vertex: DeployEnvironment = { ...env, llm: 'vertex-ai' };

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
    for (const e of [env, vertex]) {
      for (const s of SERVICE_DEPLOYMENTS) {
        expect(s.env(e)).toMatchObject({
          TDA_BACKEND: 'gcp',
          GOOGLE_CLOUD_PROJECT: 'acme-tda-prod',
          TDA_PUBSUB_PREFIX: 'tda',
          TDA_ARTIFACTS_BUCKET: 'acme-tda-prod-tda-artifacts',
        });
        // secrets never appear as plain env
        for (const secret of s.secrets(e)) expect(s.env(e)).not.toHaveProperty(secret.env);
      }
    }
  });

  it('grants each service account only resource roles with a reason, and access to exactly its own secrets', () => {
    for (const e of [env, vertex]) {
      for (const s of SERVICE_DEPLOYMENTS) {
        const roles = s.roles(e);
        expect(roles.every((r) => r.reason.length > 0)).toBe(true);
        expect(roles.some((r) => r.role === 'roles/owner' || r.role === 'roles/editor')).toBe(
          false,
        );
        const secretGrants = roles
          .filter((r) => r.role === 'roles/secretmanager.secretAccessor')
          .map((r) => (r.resource.type === 'secret' ? r.resource.name : ''));
        expect(secretGrants.sort()).toEqual(
          s
            .secrets(e)
            .map((x) => x.secret)
            .sort(),
        );
      }
    }
    const orchestratorTopics = serviceDeployment('orchestrator')
      .roles(env)
      .filter((r) => r.role === 'roles/pubsub.publisher');
    expect(orchestratorTopics).toHaveLength(STEP_TYPES.length);
  });
});

describe('LLM provider per environment', () => {
  // Every worker whose step type descriptor needs an LLM (never empty).
  const llmWorkers = llmWorkerDeployments();

  it('gemini-api: each LLM worker reads GEMINI_API_KEY from its secret and may access only that secret', () => {
    for (const llm of llmWorkers) {
      expect(llm.secrets(env)).toEqual([{ env: 'GEMINI_API_KEY', secret: SECRETS.geminiApiKey }]);
      expect(llm.env(env)).not.toHaveProperty('GOOGLE_GENAI_USE_VERTEXAI');
      expect(llm.env(env)).not.toHaveProperty('GOOGLE_CLOUD_LOCATION');
      expect(llm.roles(env).map((r) => r.role)).not.toContain('roles/aiplatform.user');
      expect(llm.roles(env).filter((r) => r.role === 'roles/secretmanager.secretAccessor')).toEqual(
        [
          {
            resource: { type: 'secret', name: SECRETS.geminiApiKey },
            role: 'roles/secretmanager.secretAccessor',
            reason: 'reads the Gemini API key',
          },
        ],
      );
    }
    // one secret container however many workers read it
    expect(referencedSecrets(env)).toEqual([SECRETS.apiToken, SECRETS.geminiApiKey]);
  });

  it('vertex-ai: each LLM worker has the Vertex env, no secret, roles/aiplatform.user instead of the secret accessor', () => {
    for (const llm of llmWorkers) {
      expect(llm.env(vertex)).toMatchObject({
        GOOGLE_GENAI_USE_VERTEXAI: 'true',
        GOOGLE_CLOUD_LOCATION: 'global',
        GOOGLE_CLOUD_PROJECT: 'acme-tda-prod',
      });
      expect(llm.secrets(vertex)).toEqual([]);
      const roles = llm.roles(vertex);
      expect(roles).toContainEqual({
        resource: { type: 'project' },
        role: 'roles/aiplatform.user',
        reason: 'calls Gemini on Vertex AI',
      });
      expect(roles.some((r) => r.role === 'roles/secretmanager.secretAccessor')).toBe(false);
    }
    // the Gemini key is created by infra apply only where a service reads it
    expect(referencedSecrets(vertex)).toEqual([SECRETS.apiToken]);
  });

  it('changes nothing but the LLM workers', () => {
    const others = SERVICE_DEPLOYMENTS.filter((d) => !llmWorkers.includes(d));
    expect(others.length + llmWorkers.length).toBe(SERVICE_DEPLOYMENTS.length);
    expect(others.length).toBeGreaterThan(0);
    for (const s of others) {
      expect(s.env(vertex)).toEqual(s.env(env));
      expect(s.secrets(vertex)).toEqual(s.secrets(env));
      expect(s.roles(vertex)).toEqual(s.roles(env));
    }
  });
});

describe('exchange account per environment', () => {
  const account = serviceDeployment('worker-account-export');
  const live = testEnvironment('prod', { exchangeAccount: 'binance' });

  it('without exchangeAccount: paper accounts only, no exchange secret referenced anywhere', () => {
    expect(account.secrets(env)).toEqual([]);
    expect(account.env(env)).not.toHaveProperty('TDA_ACCOUNT_CCXT_EXCHANGE');
    expect(referencedSecrets(env)).not.toContain(SECRETS.exchangeApiKey);
  });

  it('with exchangeAccount: key and secret from Secret Manager, accessor on exactly those two', () => {
    expect(account.env(live)).toMatchObject({ TDA_ACCOUNT_CCXT_EXCHANGE: 'binance' });
    expect(account.secrets(live)).toEqual([
      { env: 'TDA_ACCOUNT_CCXT_API_KEY', secret: SECRETS.exchangeApiKey },
      { env: 'TDA_ACCOUNT_CCXT_SECRET', secret: SECRETS.exchangeApiSecret },
    ]);
    const accessors = account
      .roles(live)
      .filter((r) => r.role === 'roles/secretmanager.secretAccessor')
      .map((r) => r.resource);
    expect(accessors).toEqual([
      { type: 'secret', name: SECRETS.exchangeApiKey },
      { type: 'secret', name: SECRETS.exchangeApiSecret },
    ]);
    expect(referencedSecrets(live)).toEqual([
      SECRETS.apiToken,
      SECRETS.geminiApiKey,
      SECRETS.exchangeApiKey,
      SECRETS.exchangeApiSecret,
    ]);
    // No other service reads them.
    for (const s of SERVICE_DEPLOYMENTS.filter((d) => d.project !== 'worker-account-export')) {
      expect(s.secrets(live)).toEqual(s.secrets(env));
      expect(s.roles(live)).toEqual(s.roles(env));
    }
  });

  it('parses exchangeAccount from deploy/environments.json', () => {
    const [parsed] = parseEnvironments({
      prod: { project: 'acme-tda-prod', region: 'europe-west1', exchangeAccount: 'binance' },
    });
    expect(parsed?.exchangeAccount).toBe('binance');
    expect(() =>
      parseEnvironments({
        prod: { project: 'acme-tda-prod', region: 'europe-west1', exchangeAccount: 'Bin ance' },
      }),
    ).toThrow(/invalid/);
  });
});

describe('deploy environments', () => {
  it('parses profiles with defaults and selects by profile or project', () => {
    const envs = parseEnvironments({
      dev: { project: 'acme-tda-dev', region: 'europe-west1' },
      prod: {
        project: 'acme-tda-prod',
        region: 'us-central1',
        maxRunningRuns: 50,
        llm: 'vertex-ai',
      },
    });
    expect(envs).toEqual([
      {
        profile: 'dev',
        project: 'acme-tda-dev',
        region: 'europe-west1',
        pubsubPrefix: 'tda',
        artifactsBucket: 'acme-tda-dev-tda-artifacts',
        maxRunningRuns: 20,
        llm: 'gemini-api',
      },
      {
        profile: 'prod',
        project: 'acme-tda-prod',
        region: 'us-central1',
        pubsubPrefix: 'tda',
        artifactsBucket: 'acme-tda-prod-tda-artifacts',
        maxRunningRuns: 50,
        llm: 'vertex-ai',
      },
    ]);
    expect(selectEnvironment(envs, { project: 'acme-tda-prod' }).profile).toBe('prod');
    expect(selectEnvironment(envs, { profile: 'dev' }).project).toBe('acme-tda-dev');
    expect(() => selectEnvironment(envs, { project: 'other-project' })).toThrow(InfraError);
  });

  it('refuses an invalid file with every issue listed', () => {
    let error: unknown;
    try {
      parseEnvironments({ prod: { project: 'X', region: 'nowhere', llm: 'openai' } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InfraError);
    expect((error as InfraError).details['issues']).toEqual([
      expect.stringContaining('prod.project'),
      expect.stringContaining('prod.region'),
      expect.stringContaining('prod.llm'),
    ]);
  });
});
