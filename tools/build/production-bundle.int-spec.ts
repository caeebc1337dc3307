import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import type { FlowRun } from '@tda/contracts';
import { DEPLOYABLE_SERVICES, type DeployableService } from '@tda/infra';
import { emulatorEndpoints, expectEventually } from '@tda/test-support';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BuildResult } from './build-lib.mjs';

const root = resolve(__dirname, '../..');

/** The deployable services (NX tag type:service), each with its own Dockerfile and image. */
const SERVICES = [...DEPLOYABLE_SERVICES].sort();
type Service = DeployableService;

/** Dev tooling that must never reach an image (each is a root devDependency). */
const DEV_ONLY = ['vitest', 'typescript', 'nx', '@nx/js', '@swc/core', 'esbuild', 'fast-check'];

const API_TOKEN = 'bundle-test-token-0123456789';

interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs a command to completion without blocking the event loop (installs run side by side). */
function run(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<CommandResult> {
  const started = Date.now();
  return new Promise((done, fail) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr, ms: Date.now() - started }));
  });
}

async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.on('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => done(port));
    });
  });
}

/** The Node 24 of this test run first on PATH, so npm (a `#!/usr/bin/env node` script) uses it. */
function toolEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PATH: [dirname(process.execPath), process.env['PATH'] ?? ''].join(delimiter),
    NX_DAEMON: 'false',
  };
}

interface Installed {
  build: BuildResult;
  installMs: number;
  /** Packages npm actually installed (its hidden lockfile), nested copies included. */
  packages: number;
}

interface RunningService {
  child: ChildProcess;
  port: number;
  /** stdout alone (the JSON log lines) and stdout + stderr (for failure messages). */
  stdout: () => string;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const outRoot = mkdtempSync(join(tmpdir(), 'tda-bundles-'));
const installed = new Map<Service, Installed>();
const children: ChildProcess[] = [];

/** `node main.js` in the installed bundle with the env the image gets, for the emulators. */
async function startService(
  service: Service,
  env: Record<string, string>,
): Promise<RunningService> {
  const { firestoreHost, pubsubHost, projectId } = emulatorEndpoints();
  const port = await freePort();
  const child = spawn(process.execPath, ['main.js'], {
    cwd: join(outRoot, service),
    env: {
      PATH: process.env['PATH'] ?? '',
      // as in the Dockerfile
      NODE_ENV: 'production',
      NODE_OPTIONS: '--enable-source-maps',
      PORT: String(port),
      TDA_BACKEND: 'emulators',
      GOOGLE_CLOUD_PROJECT: projectId,
      FIRESTORE_EMULATOR_HOST: firestoreHost,
      PUBSUB_EMULATOR_HOST: pubsubHost,
      TDA_DATA_DIR: join(outRoot, `data-${service}`),
      ...(service === 'orchestrator'
        ? {
            TDA_API_TOKEN: API_TOKEN,
            // Other test files share the emulators: never reconcile their runs.
            TDA_RECONCILE_INTERVAL_MS: '0',
            // As deployed (deployment-model): the console built into the bundle.
            TDA_CONSOLE_DIR: 'console',
          }
        : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.on('exit', (code, signal) => done({ code, signal })),
  );
  return { child, port, stdout: () => stdout, output: () => output, exited };
}

/** Polls /healthz until 200; a process that exits first fails at once with its output. */
async function expectHealthy(service: RunningService): Promise<void> {
  await expectEventually(
    async () => {
      if (service.child.exitCode !== null) {
        throw new Error(
          `exited with ${service.child.exitCode} before /healthz:\n${service.output()}`,
        );
      }
      const response = await fetch(`http://127.0.0.1:${service.port}/healthz`);
      expect(response.status).toBe(200);
    },
    { timeoutMs: 60_000, intervalMs: 200 },
  );
}

function logEvents(output: string): { event?: string; port?: number }[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { event?: string; port?: number });
}

function uniquePrefix(tag: string): string {
  return `${tag}${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
}

/**
 * What the images run (services/<project>/Dockerfile), without Docker: the production bundle of
 * each deployable service, installed with `npm ci --omit=dev` from its NX-pruned lockfile in a
 * directory outside the repository (no parent node_modules to fall back on), started with
 * `node main.js` against the emulators.
 */
describe('production bundles', () => {
  beforeAll(async () => {
    // Outside the repository: no node_modules above the bundles to resolve a missing package from.
    for (let dir = outRoot; dir !== dirname(dir); dir = dirname(dir))
      expect(existsSync(join(dirname(dir), 'node_modules')), dirname(dir)).toBe(false);
    const build = await run(
      process.execPath,
      ['tools/build/build-service.mjs', '--all', '--json', '--out-root', outRoot],
      { cwd: root, env: toolEnv() },
    );
    expect(build.code, build.stderr).toBe(0);
    const results = JSON.parse(build.stdout) as BuildResult[];
    // The four deployables are exactly the NX projects tagged type:service.
    expect(results.map((r) => r.project).sort()).toEqual([...SERVICES]);

    await Promise.all(
      results.map(async (result) => {
        const install = await run(
          'npm',
          [
            'ci',
            '--omit=dev',
            '--ignore-scripts',
            '--no-audit',
            '--no-fund',
            '--prefer-offline',
            '--loglevel=error',
          ],
          { cwd: result.outDir, env: toolEnv() },
        );
        expect(install.code, `${result.project}: ${install.stderr}`).toBe(0);
        const hidden = JSON.parse(
          readFileSync(join(result.outDir, 'node_modules', '.package-lock.json'), 'utf8'),
        ) as { packages: Record<string, unknown> };
        installed.set(result.project as Service, {
          build: result,
          installMs: install.ms,
          packages: Object.keys(hidden.packages).filter((p) => p.startsWith('node_modules/'))
            .length,
        });
      }),
    );
    // Measurements for the deployment notes (not asserted: no timing assertions).
    console.table(
      [...installed.values()].map(({ build: b, installMs, packages }) => ({
        service: b.project,
        'bundle KiB': Math.round(b.bundleBytes / 1024),
        'build ms': b.ms,
        dependencies: b.dependencies.length,
        'install ms': installMs,
        'packages installed': packages,
      })),
    );
  }, 600_000);

  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  });

  afterAll(() => {
    rmSync(outRoot, { recursive: true, force: true });
  });

  it.each(SERVICES)('%s installs production dependencies only', (service) => {
    const dir = join(outRoot, service);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      devDependencies?: unknown;
    };
    expect(manifest.devDependencies).toBeUndefined();
    expect(Object.keys(manifest.dependencies ?? {})).toEqual(
      installed.get(service)?.build.dependencies,
    );
    for (const name of DEV_ONLY)
      expect(existsSync(join(dir, 'node_modules', name)), name).toBe(false);
    // every declared dependency is really there
    for (const name of Object.keys(manifest.dependencies ?? {}))
      expect(existsSync(join(dir, 'node_modules', name, 'package.json')), name).toBe(true);
    expect(readdirSync(dir).sort()).toEqual(
      [
        'main.js',
        'main.js.map',
        'node_modules',
        'package-lock.json',
        'package.json',
        // Every service bundles @tda/market-data (candle maths, asOf, coverage), so the 1.1 MB of
        // CSVs travel with each; the orchestrator (coverage at trigger), OHLCV_EXPORT and
        // ACCOUNT_EXPORT (marks) read them.
        'market-data',
        // The orchestrator serves the web console, built into its bundle.
        ...(service === 'orchestrator' ? ['console'] : []),
      ].sort(),
    );
  });

  it('ships the chart font and the bundled market data with the services that read them', () => {
    // Charts are drawn with the DejaVu fonts of the npm package, never system fonts.
    const chart = join(outRoot, 'worker-chart-export', 'node_modules', 'dejavu-fonts-ttf', 'ttf');
    expect(existsSync(join(chart, 'DejaVuSans.ttf'))).toBe(true);
    const data = join(outRoot, 'worker-ohlcv-export', 'market-data');
    expect(readdirSync(data).sort()).toEqual(
      readdirSync(join(root, 'libs/market-data/data')).sort(),
    );
  });

  it('the four installed bundles start from `node main.js`, run flow 1 to SUCCEEDED together and stop cleanly on SIGTERM', async () => {
    // One prefix and one data dir shared by the four processes, as in one deployment: the OHLCV
    // step reads the bundled CSVs beside its main.js, the chart step draws with the packaged font.
    // Each process is started once, here: its start-up, /healthz and clean stop are checked on it.
    const shared = {
      TDA_PUBSUB_PREFIX: uniquePrefix('pf'),
      TDA_DATA_DIR: join(outRoot, 'data-flow1'),
    };
    const running = await Promise.all(SERVICES.map((service) => startService(service, shared)));
    await Promise.all(running.map((service) => expectHealthy(service)));
    await expectEventually(() => {
      for (const service of running) {
        expect(
          logEvents(service.stdout()).find((e) => e.event === 'service_started'),
          service.output(),
        ).toMatchObject({ port: service.port });
      }
    });
    const api = `http://127.0.0.1:${running[SERVICES.indexOf('orchestrator')]?.port}`;
    const headers = { authorization: `Bearer ${API_TOKEN}`, 'content-type': 'application/json' };
    // The orchestrator's bundle serves the console it was built with.
    const page = await fetch(`${api}/`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<div id="root">');

    const trigger = await fetch(`${api}/runs`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        flowKey: 'scheduled_month_week_report_v1',
        scope: { symbol: 'BTC-USDT' },
      }),
    });
    expect(trigger.status).toBe(201);
    const { runId } = (await trigger.json()) as FlowRun;
    const done = await expectEventually(
      async () => {
        const run = (await (await fetch(`${api}/runs/${runId}`, { headers })).json()) as FlowRun;
        expect(['SUCCEEDED', 'FAILED', 'CANCELLED']).toContain(run.status);
        return run;
      },
      { timeoutMs: 90_000, intervalMs: 250 },
    );
    const stepErrors = Object.entries(done.steps)
      .filter(([, step]) => step.error !== undefined)
      .map(([id, step]) => `${id}: ${step.error?.code} ${step.error?.message}`);
    expect(done.status, stepErrors.join('; ')).toBe('SUCCEEDED');
    const stepTypes = Object.values(done.steps).map((step) => step.stepType);
    expect(new Set(stepTypes)).toEqual(new Set(['OHLCV_EXPORT', 'CHART_EXPORT', 'LLM_REPORT']));
    for (const [id, step] of Object.entries(done.steps)) {
      const uri = step.outputs.gcs_uri ?? '';
      expect(uri, id).toMatch(/^gs:\/\//);
      expect(existsSync(join(shared.TDA_DATA_DIR, uri.slice('gs://'.length))), uri).toBe(true);
    }

    for (const service of running) service.child.kill('SIGTERM');
    const exits = await Promise.all(running.map((service) => service.exited));
    expect(exits).toEqual(SERVICES.map(() => ({ code: 0, signal: null })));
    for (const service of running)
      expect(logEvents(service.stdout()).map((e) => e.event)).toContain('service_stopped');
  }, 180_000);
});
