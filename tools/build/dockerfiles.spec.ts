import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DEPLOYABLE_SERVICES } from '@tda/infra';
import { describe, expect, it } from 'vitest';

const root = resolve(__dirname, '../..');

interface ProjectJson {
  name: string;
  tags?: string[];
  targets?: { build?: { options?: { command?: string; runtimeDependencies?: string[] } } };
}

const projects = readdirSync(join(root, 'services'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => ({
    dir: join(root, 'services', entry.name),
    project: JSON.parse(
      readFileSync(join(root, 'services', entry.name, 'project.json'), 'utf8'),
    ) as ProjectJson,
  }));
const deployable = projects.filter((p) => p.project.tags?.includes('type:service'));

/** The Node every npm script runs on: the exact version of the `node` devDependency. */
const pinnedNode = (
  JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    devDependencies: Record<string, string>;
  }
).devDependencies['node'];
const BASE_IMAGE = `node:${pinnedNode ?? '<no node devDependency>'}-bookworm-slim`;

function dockerfile(dir: string): string {
  return readFileSync(join(dir, 'Dockerfile'), 'utf8');
}

/** The Dockerfile's instructions (comments dropped, continuation lines joined). */
function instructions(text: string): string[] {
  return text
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

describe('service images (services/<project>/Dockerfile)', () => {
  it("are the deployment model's services: the NX projects tagged type:service, and only those", () => {
    expect(deployable.map((p) => p.project.name).sort()).toEqual([...DEPLOYABLE_SERVICES].sort());
    for (const { dir, project } of projects) {
      expect(existsSync(join(dir, 'Dockerfile')), project.name).toBe(
        deployable.some((p) => p.project.name === project.name),
      );
    }
  });

  it('are identical except the project name, which is the default of ARG SERVICE', () => {
    const normalized = deployable.map(({ dir, project }) => {
      const text = dockerfile(dir);
      expect(instructions(text)[0]).toBe(`ARG SERVICE=${project.name}`);
      return text.split(project.name).join('<project>');
    });
    expect(new Set(normalized).size).toBe(1);
  });

  it('build in a builder stage and run the bundle as a non-root user on PORT 8080', () => {
    const [first] = deployable;
    if (first === undefined) throw new Error('no deployable service');
    const lines = instructions(dockerfile(first.dir));
    expect(lines.filter((l) => l.startsWith('FROM '))).toEqual([
      `FROM ${BASE_IMAGE} AS builder`,
      `FROM ${BASE_IMAGE}`,
    ]);
    const runtime = lines.slice(lines.lastIndexOf(`FROM ${BASE_IMAGE}`));
    expect(runtime).toContain(
      'ENV NODE_ENV=production PORT=8080 NODE_OPTIONS=--enable-source-maps',
    );
    expect(runtime.some((l) => /^RUN npm ci --omit=dev /.test(l))).toBe(true);
    // the runtime stage takes nothing from the build context, only the builder's dist output
    expect(
      runtime.filter((l) => l.startsWith('COPY ')).every((l) => l.includes('--from=builder')),
    ).toBe(true);
    expect(runtime.filter((l) => l.startsWith('COPY ')).join('\n')).not.toMatch(/node_modules/);
    expect(runtime).toContain('USER node');
    expect(runtime).toContain('EXPOSE 8080');
    expect(runtime.find((l) => l.startsWith('HEALTHCHECK '))).toMatch(/\/healthz/);
    expect(runtime.at(-1)).toBe('CMD ["node", "main.js"]');
  });

  it('build and run on exactly the Node the workspace pins (the `node` devDependency)', () => {
    // A floating tag (node:24-bookworm-slim) moves under the pinned patch version: the images
    // would run another Node than the one every test ran on.
    expect(pinnedNode).toMatch(/^\d+\.\d+\.\d+$/);
    for (const { dir, project } of deployable) {
      const bases = instructions(dockerfile(dir))
        .filter((line) => line.startsWith('FROM '))
        .map((line) => line.split(/\s+/)[1]);
      expect(bases.length, project.name).toBeGreaterThan(0);
      for (const image of bases) {
        expect({
          project: project.name,
          nodeVersion: /^node:([^-]+)-/.exec(image ?? '')?.[1],
        }).toEqual({
          project: project.name,
          nodeVersion: pinnedNode,
        });
      }
    }
  });

  it('have a build target that bundles the project, with the chart font declared for the chart worker', () => {
    for (const { project } of deployable) {
      expect(project.targets?.build?.options?.command).toBe(
        'node tools/build/build-service.mjs {projectName}',
      );
    }
    const chart = deployable.find((p) => p.project.name === 'worker-chart-export');
    expect(chart?.project.targets?.build?.options?.runtimeDependencies).toContain(
      'dejavu-fonts-ttf',
    );
  });

  it('get a build context without local installs, build output or secrets', () => {
    const ignored = readFileSync(join(root, '.dockerignore'), 'utf8')
      .split('\n')
      .map((line) => line.trim());
    for (const entry of ['.git', '**/node_modules', 'dist', 'tmp', '.nx', '.data', '.env'])
      expect(ignored, entry).toContain(entry);
  });
});
