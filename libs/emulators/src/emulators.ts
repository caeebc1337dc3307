import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface RunningEmulators {
  firestoreHost: string;
  pubsubHost: string;
  projectId: string;
  stop(): Promise<void>;
}

/** Where emulators already running answer (a caller that did not start them cannot stop them). */
export type EmulatorEndpoints = Omit<RunningEmulators, 'stop'>;

interface EmulatorSpec {
  name: string;
  args: (hostPort: string, projectId: string) => string[];
  debianPackage: string;
}

const FIRESTORE: EmulatorSpec = {
  name: 'Firestore',
  args: (hostPort, projectId) => [
    'emulators',
    'firestore',
    'start',
    `--host-port=${hostPort}`,
    `--project=${projectId}`,
  ],
  debianPackage: 'google-cloud-cli-firestore-emulator',
};

const PUBSUB: EmulatorSpec = {
  name: 'Pub/Sub',
  args: (hostPort, projectId) => [
    'beta',
    'emulators',
    'pubsub',
    'start',
    `--host-port=${hostPort}`,
    `--project=${projectId}`,
  ],
  debianPackage: 'google-cloud-cli-pubsub-emulator',
};

const READY_TIMEOUT_MS = 90_000;

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        reject(new Error('could not allocate a port'));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}

export function assertGcloudPresent(gcloudBin = 'gcloud'): void {
  const probe = spawnSync(gcloudBin, ['--version'], { encoding: 'utf8' });
  if (probe.error !== undefined || probe.status !== 0) {
    throw new Error(
      `${gcloudBin} was not found.` +
        ' The integration tests start the Firestore and Pub/Sub emulators from ' +
        'google-cloud-cli: install the Debian packages google-cloud-cli, ' +
        'google-cloud-cli-firestore-emulator and google-cloud-cli-pubsub-emulator (and a Java runtime).',
    );
  }
}

async function answers(hostPort: string): Promise<boolean> {
  try {
    const response = await fetch(`http://${hostPort}/`, { signal: AbortSignal.timeout(1_000) });
    return response.ok;
  } catch {
    return false;
  }
}

interface Started {
  child: ChildProcess;
  hostPort: string;
}

async function startOne(spec: EmulatorSpec, projectId: string): Promise<Started> {
  const hostPort = `127.0.0.1:${await freePort()}`;
  // detached: gcloud forks a JVM; a process group lets stop() take both down.
  const child = spawn('gcloud', spec.args(hostPort, projectId), {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-8_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  let exited: number | null = null;
  child.on('exit', (code) => {
    exited = code ?? -1;
  });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exited !== null) break;
    if (await answers(hostPort)) return { child, hostPort };
    await sleep(250);
  }
  killGroup(child);
  const missing = /not installed|component|Please install|No such file/i.test(output);
  throw new Error(
    `The ${spec.name} emulator did not start on ${hostPort}` +
      (missing ? ` (missing component: install the Debian package ${spec.debianPackage})` : '') +
      `. Last output:\n${output}`,
  );
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null) return;
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    // already gone
  }
}

async function stopOne(started: Started): Promise<void> {
  const { child } = started;
  if (child.exitCode !== null || child.pid === undefined) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  killGroup(child);
  const timer = sleep(5_000).then(() => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  });
  await Promise.race([gone, timer]);
}

export async function startEmulators(projectId = 'tda-test'): Promise<RunningEmulators> {
  assertGcloudPresent();
  const results = await Promise.allSettled([
    startOne(FIRESTORE, projectId),
    startOne(PUBSUB, projectId),
  ]);
  const [firestoreResult, pubsubResult] = results;
  if (firestoreResult?.status !== 'fulfilled' || pubsubResult?.status !== 'fulfilled') {
    // Never leave one emulator running because the other failed to start.
    await Promise.all(results.flatMap((r) => (r.status === 'fulfilled' ? [stopOne(r.value)] : [])));
    const failure = results.find((r) => r.status === 'rejected');
    throw failure?.status === 'rejected' ? failure.reason : new Error('emulators did not start');
  }
  const firestore = firestoreResult.value;
  const pubsub = pubsubResult.value;
  return {
    firestoreHost: firestore.hostPort,
    pubsubHost: pubsub.hostPort,
    projectId,
    async stop() {
      await Promise.all([stopOne(firestore), stopOne(pubsub)]);
    },
  };
}

/** True when the gcloud CLI answers (the emulators may still lack their components). */
export function hasGcloud(gcloudBin = 'gcloud'): boolean {
  try {
    assertGcloudPresent(gcloudBin);
    return true;
  } catch {
    return false;
  }
}
