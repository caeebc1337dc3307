import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { freePort, type EmulatorEndpoints } from '@tda/emulators';

const ROOT = resolve(__dirname, '../..');

/** One production bundle started with `node main.js`, as its image runs it. */
export interface BundleProcess {
  child: ChildProcess;
  port: number;
  /** spawn → first 200 from /healthz, ms. */
  readyMs: number;
  output: () => string;
  stop(): Promise<void>;
}

/** Builds every deployable service's production bundle into `outRoot` (tools/build). */
export async function buildBundles(
  outRoot: string,
  projects: readonly string[] | 'all',
): Promise<void> {
  const targets = projects === 'all' ? ['--all'] : [...projects];
  const child = spawn(
    process.execPath,
    ['tools/build/build-service.mjs', ...targets, '--out-root', outRoot],
    {
      cwd: ROOT,
      env: { ...process.env, NX_DAEMON: 'false' },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((done) => child.on('close', done));
  if (code !== 0) throw new Error(`building the bundles failed (${code}):\n${stderr}`);
}

/** Polls /healthz every 10 ms; a process that exits first fails with its output. */
async function untilHealthy(
  port: number,
  child: ChildProcess,
  output: () => string,
): Promise<void> {
  const deadline = performance.now() + 60_000;
  while (performance.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`exited ${child.exitCode} before /healthz:\n${output()}`);
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return;
    await delay(10);
  }
  throw new Error(`no /healthz within 60 s:\n${output()}`);
}

/**
 * `node main.js` of a built bundle against the emulators, with the env of its image
 * (NODE_ENV=production, source maps). Its npm packages resolve from the repository's
 * node_modules (NODE_PATH): the same versions the pruned image installs.
 */
export async function startBundle(
  bundleDir: string,
  emulators: EmulatorEndpoints,
  env: Record<string, string> = {},
): Promise<BundleProcess> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, ['main.js'], {
    cwd: bundleDir,
    env: {
      PATH: process.env['PATH'] ?? '',
      NODE_PATH: join(ROOT, 'node_modules'),
      NODE_ENV: 'production',
      NODE_OPTIONS: '--enable-source-maps',
      PORT: String(port),
      TDA_BACKEND: 'emulators',
      GOOGLE_CLOUD_PROJECT: emulators.projectId,
      FIRESTORE_EMULATOR_HOST: emulators.firestoreHost,
      PUBSUB_EMULATOR_HOST: emulators.pubsubHost,
      TDA_DATA_DIR: join(bundleDir, 'data'),
      TDA_LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((done) => child.on('exit', () => done()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await Promise.race([exited, delay(10_000).then(() => child.kill('SIGKILL'))]);
  };
  try {
    await untilHealthy(port, child, () => output);
  } catch (error) {
    await stop();
    throw error;
  }
  return { child, port, readyMs: performance.now() - started, output: () => output, stop };
}

/** Resident set size of a process, MiB (Linux /proc; 0 elsewhere). */
export function rssMiB(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? 0 : Number(match[1]) / 1024;
  } catch {
    return 0;
  }
}
