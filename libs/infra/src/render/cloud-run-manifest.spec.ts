import { llmEnvSchema } from '@tda/llm';
import prettier from 'prettier';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  PUSH_TARGETS,
  SECRETS,
  SERVICE_DEPLOYMENTS,
  serviceDeployment,
  type DeployEnvironment,
} from '../deployment-model';
import {
  ANNOTATION,
  CONTAINER_PORT,
  HEALTH_PATH,
  cloudRunManifest,
  type CloudRunManifest,
  type ContainerEnv,
} from './cloud-run-manifest';
import { GENERATED_HEADER, renderDeployFiles } from './deploy-files';
import { manifestPath } from './skaffold-config';
import { llmWorkerDeployments, testEnvironment } from '../testing';

const dev = testEnvironment('dev');
const prod = testEnvironment('prod', {
  region: 'us-central1',
  pubsubPrefix: 'tdaprod',
  artifactsBucket: 'acme-prod-artifacts',
});

function container(manifest: CloudRunManifest) {
  const [first, ...others] = manifest.spec.template.spec.containers;
  expect(others).toEqual([]);
  if (first === undefined) throw new Error(`${manifest.metadata.name} has no container`);
  return first;
}

function envNames(env: readonly ContainerEnv[]): string[] {
  return env.map((e) => e.name);
}

/** The manifests as skaffold reads them: parsed back from the rendered YAML. */
function renderedManifests(): { path: string; manifest: CloudRunManifest }[] {
  const files = renderDeployFiles([dev, prod], '24.21.0');
  return [...files]
    .filter(([path]) => path.startsWith('deploy/cloudrun/'))
    .map(([path, content]) => ({ path, manifest: parse(content) as CloudRunManifest }));
}

describe('Cloud Run manifests', () => {
  it('renders one manifest per service and profile, named after the service', () => {
    const files = renderDeployFiles([dev, prod], '24.21.0');
    const expected = [dev, prod].flatMap((e) =>
      SERVICE_DEPLOYMENTS.map((s) => `deploy/cloudrun/${e.profile}/${s.name}.yaml`),
    );
    const yamlFiles = [...files.keys()].filter((path) => path.endsWith('.yaml'));
    expect(yamlFiles.sort()).toEqual([...expected, 'skaffold.yaml'].sort());
    for (const { path, manifest } of renderedManifests()) {
      expect(path.endsWith(`/${manifest.metadata.name}.yaml`)).toBe(true);
      expect(container(manifest).image).toBe(manifest.metadata.name);
    }
  });

  it('uses the Knative Service for request-driven services and the Worker Pool for the pull worker', () => {
    for (const s of SERVICE_DEPLOYMENTS) {
      const manifest = cloudRunManifest(s, prod);
      expect({ apiVersion: manifest.apiVersion, kind: manifest.kind }).toEqual(
        s.kind === 'Service'
          ? { apiVersion: 'serving.knative.dev/v1', kind: 'Service' }
          : { apiVersion: 'run.googleapis.com/v1', kind: 'WorkerPool' },
      );
    }
    expect(cloudRunManifest(serviceDeployment('worker-llm-report'), prod).kind).toBe('WorkerPool');
  });

  it("runs each service as its own service account in the profile's project", () => {
    for (const { path, manifest } of renderedManifests()) {
      const project = path.startsWith('deploy/cloudrun/dev/') ? dev.project : prod.project;
      expect(manifest.metadata.namespace).toBe(project);
      expect(manifest.spec.template.spec.serviceAccountName).toBe(
        `${manifest.metadata.name}@${project}.iam.gserviceaccount.com`,
      );
    }
  });

  it('passes the model env verbatim, the secrets only as Secret Manager references, and never PORT', () => {
    const secretIds: string[] = Object.values(SECRETS);
    for (const s of SERVICE_DEPLOYMENTS) {
      const env = container(cloudRunManifest(s, prod)).env;
      const plain = Object.fromEntries(
        env.flatMap((e) => ('value' in e ? [[e.name, e.value] as const] : [])),
      );
      expect(plain).toEqual(s.env(prod));
      const refs = env.flatMap((e) => ('valueFrom' in e ? [e] : []));
      expect(refs).toEqual(
        s.secrets(prod).map((x) => ({
          name: x.env,
          valueFrom: { secretKeyRef: { name: x.secret, key: 'latest' } },
        })),
      );
      for (const ref of refs) expect(secretIds).toContain(ref.valueFrom.secretKeyRef.name);
      // A secret env never also appears as a plain value, and no name is set twice.
      expect(new Set(envNames(env)).size).toBe(env.length);
      expect(envNames(env)).not.toContain('PORT');
    }
    expect(
      envNames(container(cloudRunManifest(serviceDeployment('orchestrator'), dev)).env),
    ).toContain('TDA_API_TOKEN');
  });

  it('with llm=vertex-ai renders each LLM worker with the Vertex AI env and no secret reference', () => {
    const vertex: DeployEnvironment = { ...prod, llm: 'vertex-ai' };
    const llmWorkers = llmWorkerDeployments();
    for (const worker of llmWorkers) {
      const env = container(cloudRunManifest(worker, vertex)).env;
      expect(env.filter((e) => 'valueFrom' in e)).toEqual([]);
      expect(envNames(env)).not.toContain('GEMINI_API_KEY');
      expect(env).toEqual(
        expect.arrayContaining([
          { name: 'GOOGLE_GENAI_USE_VERTEXAI', value: 'true' },
          { name: 'GOOGLE_CLOUD_LOCATION', value: 'global' },
          { name: 'GOOGLE_CLOUD_PROJECT', value: 'acme-tda-prod' },
        ]),
      );
      // The LLM fields parse as the worker reads them (the whole worker schema: tools/deploy).
      const plain = Object.fromEntries(
        env.flatMap((e) => ('value' in e ? [[e.name, e.value] as const] : [])),
      );
      const llm = llmEnvSchema.parse(plain);
      expect(llm).toMatchObject({
        GOOGLE_GENAI_USE_VERTEXAI: true,
        GOOGLE_CLOUD_LOCATION: 'global',
      });
      expect(llm.GEMINI_API_KEY).toBeUndefined();
      // gemini-api (the default) still references the key and sets no Vertex env
      const gemini = container(cloudRunManifest(worker, prod)).env;
      expect(gemini).toContainEqual({
        name: 'GEMINI_API_KEY',
        valueFrom: { secretKeyRef: { name: SECRETS.geminiApiKey, key: 'latest' } },
      });
      expect(envNames(gemini)).not.toContain('GOOGLE_GENAI_USE_VERTEXAI');
    }
    // the other services render the same whichever provider
    const others = SERVICE_DEPLOYMENTS.filter((d) => !llmWorkers.includes(d));
    expect(others.length).toBeGreaterThan(0);
    for (const s of others) {
      expect(cloudRunManifest(s, vertex)).toEqual(cloudRunManifest(s, prod));
    }
  });

  it('renders environment values from the profile (project, prefix, bucket, run limit)', () => {
    const orchestrator = container(cloudRunManifest(serviceDeployment('orchestrator'), prod)).env;
    expect(orchestrator).toEqual(
      expect.arrayContaining([
        { name: 'GOOGLE_CLOUD_PROJECT', value: 'acme-tda-prod' },
        { name: 'TDA_PUBSUB_PREFIX', value: 'tdaprod' },
        { name: 'TDA_ARTIFACTS_BUCKET', value: 'acme-prod-artifacts' },
        { name: 'TDA_MAX_RUNNING_RUNS', value: '20' },
      ]),
    );
  });

  it('probes GET /healthz on the container port for startup and liveness', () => {
    for (const { manifest } of renderedManifests()) {
      const c = container(manifest);
      for (const probe of [c.startupProbe, c.livenessProbe]) {
        expect(probe.httpGet).toEqual({ path: HEALTH_PATH, port: CONTAINER_PORT });
        // Cloud Run: timeout <= period, and a startup probe gives up within 240 s.
        expect(probe.timeoutSeconds).toBeLessThanOrEqual(probe.periodSeconds);
      }
      expect(c.startupProbe.periodSeconds * c.startupProbe.failureThreshold).toBeLessThanOrEqual(
        240,
      );
      if (manifest.kind === 'Service') {
        expect(c.ports).toEqual([{ name: 'http1', containerPort: CONTAINER_PORT }]);
      } else {
        expect(c.ports).toBeUndefined();
      }
    }
  });

  it('lets push workers and the orchestrator accept their OIDC audience and keeps every Service IAM-only', () => {
    const pushNames = PUSH_TARGETS.map((t) => serviceDeployment(t.service).name);
    for (const s of SERVICE_DEPLOYMENTS) {
      const { annotations } = cloudRunManifest(s, dev).metadata;
      if (pushNames.includes(s.name)) {
        expect(JSON.parse(annotations[ANNOTATION.customAudiences] ?? 'null')).toEqual([s.name]);
        expect(annotations[ANNOTATION.access]).toContain('tda-pubsub-push@acme-tda-dev.iam');
      } else if (s.project === 'orchestrator') {
        // Cloud Scheduler's jobs call with this audience (TDA_ADMIN_OIDC_AUDIENCE).
        expect(JSON.parse(annotations[ANNOTATION.customAudiences] ?? 'null')).toEqual([
          'tda-orchestrator',
        ]);
        expect(s.env(dev)['TDA_ADMIN_OIDC_AUDIENCE']).toBe('tda-orchestrator');
      } else {
        expect(annotations).not.toHaveProperty(ANNOTATION.customAudiences);
      }
      // No manifest turns the invoker IAM check off (that would make the URL public).
      expect(annotations).not.toHaveProperty('run.googleapis.com/invoker-iam-disabled');
      expect(annotations[ANNOTATION.why]).toBe(s.why);
    }
    expect(
      cloudRunManifest(serviceDeployment('orchestrator'), dev).metadata.annotations[
        ANNOTATION.access
      ],
    ).toMatch(/^IAM invoker only: no allUsers/);
  });

  it('sizes Services from the model (scale, CPU allocation, concurrency, timeout, resources)', () => {
    for (const s of SERVICE_DEPLOYMENTS) {
      const manifest = cloudRunManifest(s, dev);
      const c = container(manifest);
      expect(c.resources.limits).toEqual({ cpu: s.cpu, memory: s.memory });
      const template = manifest.spec.template;
      if (s.kind === 'Service') {
        expect(template.metadata.annotations).toEqual({
          [ANNOTATION.minScale]: String(s.minInstances),
          [ANNOTATION.maxScale]: String(s.maxInstances),
          [ANNOTATION.cpuThrottling]: s.cpuAlwaysAllocated ? 'false' : 'true',
          [ANNOTATION.startupCpuBoost]: 'true',
          [ANNOTATION.executionEnvironment]: 'gen2',
        });
        expect(template.spec.containerConcurrency).toBe(s.concurrency);
        expect(template.spec.timeoutSeconds).toBe(s.timeoutSeconds);
      } else {
        // gcloud reads a pool without scalingMode: manual as automatically scaled and ignores
        // the instance count.
        expect(manifest.metadata.annotations).toMatchObject({
          'run.googleapis.com/scalingMode': 'manual',
          'run.googleapis.com/manualInstanceCount': String(s.minInstances),
        });
        expect(template.spec).not.toHaveProperty('containerConcurrency');
        expect(template.spec).not.toHaveProperty('timeoutSeconds');
      }
    }
    expect(
      cloudRunManifest(serviceDeployment('orchestrator'), dev).spec.template.metadata.annotations?.[
        ANNOTATION.cpuThrottling
      ],
    ).toBe('false');
  });

  it('labels only with keys and values Cloud Run accepts (Google Cloud label syntax)', () => {
    for (const { manifest } of renderedManifests()) {
      for (const labels of [manifest.metadata.labels, manifest.spec.template.metadata.labels]) {
        expect(labels).toMatchObject({ 'part-of': 'tda' });
        for (const [key, value] of Object.entries(labels)) {
          expect(key).toMatch(/^[a-z][a-z0-9_-]{0,62}$/);
          expect(value).toMatch(/^[a-z0-9_-]{0,63}$/);
        }
      }
    }
  });

  it('is deterministic, starts with the generated header and is already prettier-formatted', async () => {
    const first = renderDeployFiles([dev, prod], '24.21.0');
    expect(renderDeployFiles([dev, prod], '24.21.0')).toEqual(first);
    const options = (await prettier.resolveConfig(manifestPath('dev', { name: 'x' }))) ?? {};
    for (const [path, content] of first) {
      if (path.endsWith('.yaml')) {
        expect(content.startsWith(`# ${GENERATED_HEADER}\n`), path).toBe(true);
        // Shared objects are written out, not as YAML anchors that a reader has to resolve.
        expect(content, path).not.toMatch(/[&*]a\d+\b/);
      }
      if (path.endsWith('Dockerfile'))
        expect(content, path).toMatch(/generated by `npx tda infra render`/);
      // `npm run format:check` covers the generated YAML and JSON too.
      if (!path.endsWith('Dockerfile')) {
        const parser = path.endsWith('.json') ? 'json' : 'yaml';
        expect(await prettier.format(content, { ...options, parser }), path).toBe(content);
      }
    }
  });
});
