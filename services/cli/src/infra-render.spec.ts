import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, type CliIo } from './cli';

function tempRepo(): string {
  const root = mkdtempSync(join(tmpdir(), 'tda-render-'));
  mkdirSync(join(root, 'deploy'));
  writeFileSync(
    join(root, 'deploy', 'environments.json'),
    JSON.stringify({ staging: { project: 'acme-tda-staging', region: 'us-central1' } }),
  );
  writeFileSync(
    join(root, 'package.json'),
    JSON.stringify({ devDependencies: { node: '24.21.0' } }),
  );
  return root;
}

function io(root: string, out: string[], err: string[]): CliIo {
  return {
    stdout: { write: (t: string) => out.push(t) > 0 },
    stderr: { write: (t: string) => err.push(t) > 0 },
    target: () => {
      throw new Error('unused');
    },
    env: {},
    deploySearchFrom: [join(root, 'deploy')],
  };
}

describe('tda infra render', () => {
  it('writes the manifests and skaffold.yaml of every profile, then --check passes', async () => {
    const root = tempRepo();
    const out: string[] = [];
    const err: string[] = [];
    expect(await runCli(['infra', 'render'], io(root, out, err))).toBe(0);
    expect(err).toEqual([]);
    expect(out.join('')).toContain('written   deploy/cloudrun/staging/tda-orchestrator.yaml');
    expect(out.join('')).toContain('written   skaffold.yaml');
    expect(out.join('')).toContain('written   services/worker-llm-report/Dockerfile');
    const manifest = readFileSync(
      join(root, 'deploy/cloudrun/staging/tda-worker-llm-report.yaml'),
      'utf8',
    );
    expect(manifest).toContain('serviceAccountName: tda-worker-llm-report@acme-tda-staging.iam');
    out.length = 0;
    expect(await runCli(['infra', 'render', '--check'], io(root, out, err))).toBe(0);
    expect(out.join('')).toContain('deploy files are up to date');
  });

  it('--check fails with the stale file named and writes nothing', async () => {
    const root = tempRepo();
    const out: string[] = [];
    const err: string[] = [];
    await runCli(['infra', 'render'], io(root, out, err));
    const file = join(root, 'deploy/cloudrun/staging/tda-orchestrator.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('512Mi', '4Gi'));
    expect(await runCli(['infra', 'render', '--check'], io(root, out, err))).toBe(1);
    expect(err.join('')).toMatch(/deploy\/cloudrun\/staging\/tda-orchestrator\.yaml: stale/);
    expect(readFileSync(file, 'utf8')).toContain('4Gi');
  });
});
