import { existsSync, globSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import {
  ANNOTATION,
  CONTAINER_PORT,
  DEPLOYABLE_SERVICES,
  HEALTH_PATH,
  SECRETS,
  LLM_PROVIDERS,
  SERVICE_DEPLOYMENTS,
  checkDeployFiles,
  environmentSchema,
  readDeployEnvironments,
  renderDeployFiles,
  serviceAccountEmail,
  type DeployableService,
  type DeployEnvironment,
} from '@tda/infra';
import { orchestratorConfigSchema } from '@tda/service-orchestrator';
import { LOCAL_WORKERS } from '@tda/service-local-stack';
import { llmReportConfigSchema } from '@tda/service-worker-llm-report';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';

/**
 * Repository-level checks of what `skaffold run` deploys: every deployable NX service has a
 * Dockerfile, a manifest per profile and a skaffold artifact (and nothing else does); every
 * committed manifest is structurally what Cloud Run and the service's own config schema accept;
 * skaffold.yaml points at those files and at the projects of deploy/environments.json; and the
 * committed files are exactly what `tda infra render` produces now.
 */

const ROOT = resolve(__dirname, '../..');

/** The zod schema each service validates its env with at boot (a worker's: its definition's). */
const CONFIG_SCHEMAS: ReadonlyMap<DeployableService, z.ZodType> = new Map<
  DeployableService,
  z.ZodType
>([
  ['orchestrator', orchestratorConfigSchema],
  ...LOCAL_WORKERS.map((w): [DeployableService, z.ZodType] => [
    w.descriptor.service,
    w.configSchema,
  ]),
]);

/** The env keys a config schema declares (through refine / transform wrappers). */
function schemaKeys(schema: z.ZodType): string[] {
  if (schema instanceof z.ZodObject) return Object.keys(schema.shape);
  if (schema instanceof z.ZodPipe) return schemaKeys(schema.in as z.ZodType);
  throw new Error(`cannot list the keys of a ${schema.constructor.name}`);
}

const ALLOWED_KINDS = [
  { apiVersion: 'serving.knative.dev/v1', kind: 'Service' },
  { apiVersion: 'run.googleapis.com/v1', kind: 'WorkerPool' },
];

const annotations = z.record(z.string(), z.string());
const labels = z.record(z.string().regex(/^[a-z][a-z0-9_-]{0,62}$/), z.string());
const probe = z.object({
  httpGet: z.object({ path: z.string(), port: z.number().int() }),
  timeoutSeconds: z.number().int().min(1),
  periodSeconds: z.number().int().min(1),
  failureThreshold: z.number().int().min(1),
});
const envVar = z.union([
  z.strictObject({ name: z.string(), value: z.string() }),
  z.strictObject({
    name: z.string(),
    valueFrom: z.strictObject({
      secretKeyRef: z.strictObject({ name: z.string(), key: z.string() }),
    }),
  }),
]);
/** What TDA's manifests must look like (Cloud Run v1 YAML, the subset TDA uses). */
const manifestShape = z.object({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: z.object({ name: z.string(), namespace: z.string(), labels, annotations }),
  spec: z.object({
    template: z.object({
      metadata: z.object({ labels, annotations: annotations.optional() }),
      spec: z.object({
        containerConcurrency: z.number().int().min(1).max(1000).optional(),
        timeoutSeconds: z.number().int().min(1).max(3600).optional(),
        serviceAccountName: z.string(),
        containers: z
          .array(
            z.object({
              image: z.string(),
              ports: z.array(z.object({ name: z.string(), containerPort: z.number() })).optional(),
              env: z.array(envVar),
              resources: z.object({ limits: z.object({ cpu: z.string(), memory: z.string() }) }),
              startupProbe: probe,
              livenessProbe: probe,
            }),
          )
          .length(1),
      }),
    }),
  }),
});
type Manifest = z.infer<typeof manifestShape>;

const skaffoldShape = z.object({
  apiVersion: z.string(),
  kind: z.literal('Config'),
  metadata: z.object({ name: z.string() }),
  build: z.object({
    platforms: z.array(z.string()),
    tagPolicy: z.object({ gitCommit: z.object({}) }),
    artifacts: z.array(
      z.object({
        image: z.string(),
        context: z.string(),
        docker: z.object({ dockerfile: z.string() }),
      }),
    ),
  }),
  profiles: z.array(
    z.object({
      name: z.string(),
      build: z.object({ googleCloudBuild: z.object({ projectId: z.string() }) }).optional(),
      manifests: z.object({ rawYaml: z.array(z.string()).min(1) }),
      deploy: z.object({
        cloudrun: z.object({
          projectid: z.string(),
          region: z.string(),
          hooks: z.object({
            before: z.array(z.object({ command: z.array(z.string()) })),
            after: z.array(z.object({ command: z.array(z.string()) })),
          }),
        }),
      }),
    }),
  ),
});

function readYaml(path: string): unknown {
  return parse(readFileSync(join(ROOT, path), 'utf8'));
}

const skaffold = skaffoldShape.parse(readYaml('skaffold.yaml'));
const environments: DeployEnvironment[] = readDeployEnvironments(ROOT);
const artifactImages = skaffold.build.artifacts.map((a) => a.image);

/** NX projects and their tags, from every project.json of the workspace. */
function nxProjects(): { name: string; root: string; tags: string[] }[] {
  return globSync(['services/*/project.json', 'libs/*/project.json'], { cwd: ROOT }).map((file) => {
    const json = JSON.parse(readFileSync(join(ROOT, file), 'utf8')) as {
      name: string;
      tags?: string[];
    };
    return { name: json.name, root: dirname(file), tags: json.tags ?? [] };
  });
}

/** Every committed manifest: deploy/cloudrun/<profile>/<file>.yaml. */
function committedManifests(): { path: string; profile: string; manifest: Manifest }[] {
  return globSync('deploy/cloudrun/*/*', { cwd: ROOT })
    .sort()
    .map((path) => ({
      path,
      profile: basename(dirname(path)),
      manifest: manifestShape.parse(readYaml(path)),
    }));
}

const secretIds: string[] = Object.values(SECRETS);

/**
 * The container env of a manifest sets only env its service's zod config schema declares, secrets
 * only by reference, and as a whole passes that schema (a revision boots without ConfigError).
 */
function expectEnvAcceptedByService(manifest: Manifest): void {
  const deployment = SERVICE_DEPLOYMENTS.find((s) => s.name === manifest.metadata.name);
  if (deployment === undefined) throw new Error(`no model for ${manifest.metadata.name}`);
  const schema = CONFIG_SCHEMAS.get(deployment.project);
  if (schema === undefined) throw new Error(`no config schema for ${deployment.project}`);
  const env = manifest.spec.template.spec.containers[0]?.env ?? [];
  const names = env.map((e) => e.name);
  expect(new Set(names).size).toBe(names.length);
  // Cloud Run sets PORT itself and refuses it in a manifest.
  expect(names).not.toContain('PORT');
  const declared = schemaKeys(schema);
  for (const name of names) expect(declared, `${name} is not in the config schema`).toContain(name);

  const processEnv: Record<string, string> = {};
  for (const e of env) {
    if ('value' in e) {
      processEnv[e.name] = e.value;
      continue;
    }
    expect(secretIds).toContain(e.valueFrom.secretKeyRef.name);
    expect(e.valueFrom.secretKeyRef.key).toBe('latest');
    // Never a secret's value: Secret Manager resolves it when the instance starts.
    processEnv[e.name] = 'placeholder-secret-value-0123456789';
  }
  const parsed = schema.safeParse(processEnv);
  expect(parsed.error?.issues ?? []).toEqual([]);
}

describe('deployable services', () => {
  const services = nxProjects().filter((p) => p.tags.includes('type:service'));

  it('are exactly the NX projects tagged type:service, each with a Dockerfile', () => {
    expect(services.map((s) => s.name).sort()).toEqual([...DEPLOYABLE_SERVICES].sort());
    for (const service of services) {
      expect(existsSync(join(ROOT, service.root, 'Dockerfile')), `${service.root}/Dockerfile`).toBe(
        true,
      );
    }
  });

  it('each have a skaffold artifact built from their Dockerfile, and no artifact is extra', () => {
    expect([...artifactImages].sort()).toEqual(services.map((s) => `tda-${s.name}`).sort());
    for (const artifact of skaffold.build.artifacts) {
      const service = services.find((s) => `tda-${s.name}` === artifact.image);
      expect(artifact.context).toBe('.');
      expect(artifact.docker.dockerfile).toBe(`${service?.root ?? '?'}/Dockerfile`);
    }
  });

  it('each have one manifest in every profile directory, and no manifest is extra', () => {
    const profiles = environments.map((e) => e.profile).sort();
    expect(readdirSync(join(ROOT, 'deploy/cloudrun')).sort()).toEqual(profiles);
    for (const profile of profiles) {
      expect(readdirSync(join(ROOT, 'deploy/cloudrun', profile)).sort()).toEqual(
        services.map((s) => `tda-${s.name}.yaml`).sort(),
      );
    }
  });
});

describe('committed Cloud Run manifests', () => {
  const manifests = committedManifests();

  it('exist for every profile and service', () => {
    expect(manifests).toHaveLength(environments.length * SERVICE_DEPLOYMENTS.length);
  });

  it.each(manifests.map((m) => [m.path, m] as const))(
    '%s is a Cloud Run resource of the model, run as its own identity',
    (path, { profile, manifest }) => {
      const environment = environments.find((e) => e.profile === profile);
      const deployment = SERVICE_DEPLOYMENTS.find((s) => s.name === manifest.metadata.name);
      if (environment === undefined || deployment === undefined) {
        throw new Error(`${path}: unknown profile ${profile} or service ${manifest.metadata.name}`);
      }
      expect(ALLOWED_KINDS).toContainEqual({
        apiVersion: manifest.apiVersion,
        kind: manifest.kind,
      });
      expect(manifest.kind).toBe(deployment.kind);
      expect(basename(path)).toBe(`${manifest.metadata.name}.yaml`);
      expect(artifactImages).toContain(manifest.metadata.name);
      const [container] = manifest.spec.template.spec.containers;
      expect(container?.image).toBe(manifest.metadata.name);
      expect(manifest.metadata.namespace).toBe(environment.project);
      expect(manifest.spec.template.spec.serviceAccountName).toBe(
        serviceAccountEmail(deployment.name, environment.project),
      );
      expect(manifest.metadata.labels).toMatchObject({ 'part-of': 'tda' });
      expect(manifest.metadata.annotations[ANNOTATION.why]).toBe(deployment.why);
      expect(manifest.metadata.annotations[ANNOTATION.access]).toEqual(expect.any(String));
      for (const p of [container?.startupProbe, container?.livenessProbe]) {
        expect(p?.httpGet).toEqual({ path: HEALTH_PATH, port: CONTAINER_PORT });
      }
    },
  );

  it.each(manifests.map((m) => [m.path, m] as const))(
    '%s carries the annotations of its kind and ingress',
    (_path, { manifest }) => {
      const top = manifest.metadata.annotations;
      const template = manifest.spec.template.metadata.annotations ?? {};
      if (manifest.kind === 'Service') {
        expect(top[ANNOTATION.ingress]).toBe('all');
        for (const key of [
          ANNOTATION.minScale,
          ANNOTATION.maxScale,
          ANNOTATION.cpuThrottling,
          ANNOTATION.startupCpuBoost,
          ANNOTATION.executionEnvironment,
        ]) {
          expect(template[key], key).toEqual(expect.any(String));
        }
        expect(manifest.spec.template.spec.containerConcurrency).toEqual(expect.any(Number));
        expect(manifest.spec.template.spec.timeoutSeconds).toEqual(expect.any(Number));
      } else {
        expect(Number(top[ANNOTATION.manualInstanceCount])).toBeGreaterThanOrEqual(1);
      }
      const audience = SERVICE_DEPLOYMENTS.find(
        (s) => s.name === manifest.metadata.name,
      )?.customAudience;
      if (audience !== undefined) {
        expect(JSON.parse(top[ANNOTATION.customAudiences] ?? '[]')).toEqual([audience]);
      } else {
        expect(top).not.toHaveProperty(ANNOTATION.customAudiences);
      }
      expect(top).not.toHaveProperty('run.googleapis.com/invoker-iam-disabled');
    },
  );

  it.each(manifests.map((m) => [m.path, m] as const))(
    '%s sets only env its service schema declares, and secrets only by reference',
    (_path, { manifest }) => expectEnvAcceptedByService(manifest),
  );
});

describe('every LLM provider', () => {
  // deploy/environments.json keeps the default; render each provider for its profiles in memory.
  const renderings = LLM_PROVIDERS.flatMap((llm) =>
    [
      ...renderDeployFiles(
        environments.map((e) => ({ ...e, llm })),
        '24.21.0',
      ),
    ]
      .filter(([path]) => path.startsWith('deploy/cloudrun/'))
      .map(([path, content]) => ({ llm, path, manifest: manifestShape.parse(parse(content)) })),
  );

  it.each(renderings.map((r) => [`${r.llm} ${r.path}`, r] as const))(
    '%s boots with env its service schema accepts',
    (_name, { manifest }) => expectEnvAcceptedByService(manifest),
  );

  it('vertex-ai: the LLM worker selects Vertex AI and references no secret', () => {
    const llmWorkers = renderings.filter(
      (r) => r.llm === 'vertex-ai' && r.manifest.metadata.name === 'tda-worker-llm-report',
    );
    expect(llmWorkers).toHaveLength(environments.length);
    for (const { manifest } of llmWorkers) {
      const env = manifest.spec.template.spec.containers[0]?.env ?? [];
      expect(env.filter((e) => 'valueFrom' in e)).toEqual([]);
      expect(env).toContainEqual({ name: 'GOOGLE_GENAI_USE_VERTEXAI', value: 'true' });
      expect(env).toContainEqual({ name: 'GOOGLE_CLOUD_LOCATION', value: 'global' });
      const config = llmReportConfigSchema.parse(
        Object.fromEntries(env.flatMap((e) => ('value' in e ? [[e.name, e.value]] : []))),
      );
      expect(config).toMatchObject({ GOOGLE_GENAI_USE_VERTEXAI: true });
      expect(config.GEMINI_API_KEY).toBeUndefined();
    }
  });
});

describe('a live exchange account', () => {
  // deploy/environments.json has none; render one for its profiles in memory.
  const renderings = [
    ...renderDeployFiles(
      environments.map((e) => ({ ...e, exchangeAccount: 'binance' })),
      '24.21.0',
    ),
  ]
    .filter(([path]) => path.startsWith('deploy/cloudrun/'))
    .map(([path, content]) => ({ path, manifest: manifestShape.parse(parse(content)) }));

  it.each(renderings.map((r) => [r.path, r] as const))(
    '%s boots with env its service schema accepts',
    (_name, { manifest }) => expectEnvAcceptedByService(manifest),
  );

  it('the account worker reads the key and secret from Secret Manager, never as plain env', () => {
    const workers = renderings.filter(
      (r) => r.manifest.metadata.name === 'tda-worker-account-export',
    );
    expect(workers).toHaveLength(environments.length);
    for (const { manifest } of workers) {
      const env = manifest.spec.template.spec.containers[0]?.env ?? [];
      expect(env).toContainEqual({ name: 'TDA_ACCOUNT_CCXT_EXCHANGE', value: 'binance' });
      expect(env.filter((e) => 'valueFrom' in e)).toEqual([
        {
          name: 'TDA_ACCOUNT_CCXT_API_KEY',
          valueFrom: { secretKeyRef: { name: 'tda-exchange-api-key', key: 'latest' } },
        },
        {
          name: 'TDA_ACCOUNT_CCXT_SECRET',
          valueFrom: { secretKeyRef: { name: 'tda-exchange-api-secret', key: 'latest' } },
        },
      ]);
    }
  });
});

describe('skaffold.yaml', () => {
  it('uses schema v4beta14, builds linux/amd64 and names the config tda', () => {
    expect(skaffold.apiVersion).toBe('skaffold/v4beta14');
    expect(skaffold.metadata.name).toBe('tda');
    expect(skaffold.build.platforms).toEqual(['linux/amd64']);
  });

  it('has one profile per environment, deploying to its project and region', () => {
    expect(skaffold.profiles.map((p) => p.name)).toEqual(environments.map((e) => e.profile));
    for (const environment of environments) {
      const profile = skaffold.profiles.find((p) => p.name === environment.profile);
      expect(profile?.deploy.cloudrun).toMatchObject({
        projectid: environment.project,
        region: environment.region,
      });
      if (profile?.build !== undefined) {
        expect(profile.build.googleCloudBuild.projectId).toBe(environment.project);
      }
      const apply = ['npx', 'tda', 'infra', 'apply', '--profile', environment.profile];
      expect(profile?.deploy.cloudrun.hooks.before).toContainEqual({ command: apply });
      expect(profile?.deploy.cloudrun.hooks.after).toContainEqual({ command: apply });
    }
  });

  it("has rawYaml globs that match exactly the profile's committed manifests", () => {
    for (const profile of skaffold.profiles) {
      const matched = profile.manifests.rawYaml.flatMap((pattern) => {
        const files = globSync(pattern, { cwd: ROOT });
        expect(files, `${profile.name}: ${pattern} matches nothing`).not.toEqual([]);
        return files;
      });
      expect(matched.sort()).toEqual(
        SERVICE_DEPLOYMENTS.map((s) => `deploy/cloudrun/${profile.name}/${s.name}.yaml`).sort(),
      );
    }
  });
});

describe('generated deployment files', () => {
  it('match a fresh rendering of the model and deploy/environments.json (run `npx tda infra render`)', () => {
    const diffs = checkDeployFiles(ROOT).map((d) => `${d.problem}: ${d.path}`);
    expect(diffs, 'run `npx tda infra render` and commit the result').toEqual([]);
  });
});

/** Every row of every Markdown table in a file, as trimmed cells without backticks. */
function markdownTableRows(path: string): string[][] {
  return readFileSync(join(ROOT, path), 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|[\s|:-]+\|$/.test(line))
    .map((line) =>
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim().replaceAll('`', '')),
    );
}

describe('deploy/README.md', () => {
  const rows = markdownTableRows('deploy/README.md');

  // The kind, sizing and roles tables are generated from the model (tools/docs/readme.spec.ts).

  // What depends on the environment's `llm` is listed for every provider (marked in the table).
  const variants = (): DeployEnvironment[] => {
    const environment = environments[0];
    if (environment === undefined) throw new Error('no environment');
    return [
      ...LLM_PROVIDERS.map((llm) => ({ ...environment, llm })),
      // A live exchange account adds the account worker's two secrets.
      { ...environment, exchangeAccount: 'binance' },
    ];
  };

  it('names every secret with the env variable and service that read it', () => {
    for (const environment of variants()) {
      for (const s of SERVICE_DEPLOYMENTS) {
        for (const secret of s.secrets(environment)) {
          expect(
            rows.some(
              (cells) => cells[0] === secret.secret && cells[1] === `${secret.env} (${s.name})`,
            ),
          ).toBe(true);
        }
      }
    }
  });

  it('documents every field of environments.json', () => {
    const documented = rows.map((cells) => cells[0]);
    for (const field of Object.keys(environmentSchema.shape)) {
      expect(documented, `${field} is not in the environments.json table`).toContain(field);
    }
  });
});
