import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SERVICE_DEPLOYMENTS } from '../deployment-model';
import { InfraError } from '../infra.errors';
import { testEnvironment } from '../testing';
import { checkDeployFiles, renderDeployFiles, writeDeployFiles } from './deploy-files';

const ENVIRONMENTS = {
  dev: { project: 'acme-tda-dev', region: 'europe-west1' },
  prod: { project: 'acme-tda-prod', region: 'europe-west1', maxRunningRuns: 50 },
};
// Per environment one manifest per service; per service a Dockerfile and a project.json; skaffold.yaml.
const RENDERED_COUNT = 2 * SERVICE_DEPLOYMENTS.length + 2 * SERVICE_DEPLOYMENTS.length + 1;

describe('writeDeployFiles / checkDeployFiles', () => {
  let root: string;

  function setEnvironments(json: unknown): void {
    writeFileSync(join(root, 'deploy/environments.json'), JSON.stringify(json, null, 2));
  }

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'tda-render-'));
    mkdirSync(join(root, 'deploy'));
    writeFileSync(
      join(root, 'package.json'),
      JSON.stringify({ devDependencies: { node: '24.21.0' } }),
    );
    setEnvironments(ENVIRONMENTS);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('reports every file missing, writes them, then reports nothing and rewrites nothing', () => {
    const missing = checkDeployFiles(root);
    expect(missing).toHaveLength(RENDERED_COUNT);
    expect(missing.every((d) => d.problem === 'missing')).toBe(true);

    const first = writeDeployFiles(root);
    expect(first.written).toHaveLength(RENDERED_COUNT);
    expect(checkDeployFiles(root)).toEqual([]);
    expect(readFileSync(join(root, 'deploy/cloudrun/prod/tda-orchestrator.yaml'), 'utf8')).toBe(
      renderDeployFiles(
        [
          testEnvironment('dev', { maxRunningRuns: 20 }),
          testEnvironment('prod', { maxRunningRuns: 50 }),
        ],
        '24.21.0',
      ).get('deploy/cloudrun/prod/tda-orchestrator.yaml'),
    );

    expect(writeDeployFiles(root)).toEqual({
      written: [],
      unchanged: first.written,
      removed: [],
    });
  });

  it('catches a hand-edited manifest and an environments.json change that was not re-rendered', () => {
    writeDeployFiles(root);
    const manifest = join(root, 'deploy/cloudrun/dev/tda-worker-chart-export.yaml');
    writeFileSync(manifest, readFileSync(manifest, 'utf8').replace('memory: 1Gi', 'memory: 2Gi'));
    expect(checkDeployFiles(root)).toEqual([
      { path: 'deploy/cloudrun/dev/tda-worker-chart-export.yaml', problem: 'stale' },
    ]);

    setEnvironments({
      ...ENVIRONMENTS,
      prod: { project: 'acme-tda-prod2', region: 'europe-west1' },
    });
    const stale = checkDeployFiles(root).map((d) => d.path);
    // Every prod manifest (namespace, service account, env) and skaffold.yaml (projectid).
    expect(stale).toEqual(
      expect.arrayContaining([
        'skaffold.yaml',
        ...SERVICE_DEPLOYMENTS.map((s) => `deploy/cloudrun/prod/${s.name}.yaml`),
      ]),
    );
    writeDeployFiles(root);
    expect(checkDeployFiles(root)).toEqual([]);
  });

  it('renders each service Dockerfile and project.json from the model and the pinned Node', () => {
    writeDeployFiles(root);
    const dockerfile = readFileSync(join(root, 'services/worker-chart-export/Dockerfile'), 'utf8');
    expect(dockerfile).toContain('ARG SERVICE=worker-chart-export');
    expect(dockerfile.match(/^FROM node:24\.21\.0-bookworm-slim/gm)).toHaveLength(2);
    const project = JSON.parse(
      readFileSync(join(root, 'services/worker-chart-export/project.json'), 'utf8'),
    ) as { targets: { build: { options: { runtimeDependencies: string[] } } } };
    expect(project.targets.build.options.runtimeDependencies).toContain('dejavu-fonts-ttf');

    // A Node bump re-renders every Dockerfile and nothing else.
    writeFileSync(
      join(root, 'package.json'),
      JSON.stringify({ devDependencies: { node: '24.22.0' } }),
    );
    expect(checkDeployFiles(root)).toEqual(
      SERVICE_DEPLOYMENTS.map((s) => ({
        path: `services/${s.project}/Dockerfile`,
        problem: 'stale',
      })),
    );
    writeFileSync(join(root, 'package.json'), JSON.stringify({ devDependencies: { node: '^24' } }));
    expect(() => checkDeployFiles(root)).toThrow(/pin the node devDependency/);
  });

  it('reports and removes manifests of a profile that is gone', () => {
    writeDeployFiles(root);
    setEnvironments({ dev: ENVIRONMENTS.dev });
    const diffs = checkDeployFiles(root);
    expect(diffs.filter((d) => d.problem === 'stray').map((d) => d.path)).toEqual(
      SERVICE_DEPLOYMENTS.map((s) => `deploy/cloudrun/prod/${s.name}.yaml`).sort(),
    );
    expect(diffs).toContainEqual({ path: 'skaffold.yaml', problem: 'stale' });

    const result = writeDeployFiles(root);
    expect(result.removed).toHaveLength(SERVICE_DEPLOYMENTS.length);
    expect(result.written).toEqual(['skaffold.yaml']);
    expect(readdirSync(join(root, 'deploy/cloudrun'))).toEqual(['dev']);
    expect(checkDeployFiles(root)).toEqual([]);
  });

  it('refuses an invalid or unreadable environments file with an InfraError', () => {
    setEnvironments({ prod: { project: 'X', region: 'nowhere' } });
    expect(() => checkDeployFiles(root)).toThrow(InfraError);
    rmSync(join(root, 'deploy/environments.json'));
    expect(() => writeDeployFiles(root)).toThrow(/cannot read deploy\/environments.json/);
    expect(() => renderDeployFiles([], '24.21.0')).toThrow(InfraError);
  });
});
