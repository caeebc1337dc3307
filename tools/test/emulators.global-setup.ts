import type { TestProject } from 'vitest/node';
import '../../libs/test-support/src/provided-context';
import { resolve } from 'node:path';
import { startEmulators, type RunningEmulators } from '../../libs/emulators/src/emulators';
import { ensureConsoleBuilt } from '../../services/local-stack/src/console-build';

/**
 * Vitest global setup for the integration project: builds the console when stale, starts the
 * Firestore and Pub/Sub emulators
 * from google-cloud-cli on free loopback ports once per test run and stops them afterwards.
 * Tests read the hosts with `inject('emulators')`; nothing here touches process.env of the
 * services, so the code under test gets its endpoints through config exactly as in production.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // The console once, before any test: `npm start` (npm-start test) and the browser tests serve
  // dist/console and must never see it half written by a build of another test file.
  const built = ensureConsoleBuilt(resolve(__dirname, '../..'), () => undefined);
  if (built.dir === undefined) throw new Error(built.reason);
  const running: RunningEmulators = await startEmulators();
  project.provide('emulators', {
    firestoreHost: running.firestoreHost,
    pubsubHost: running.pubsubHost,
    projectId: running.projectId,
  });
  return async () => {
    await running.stop();
  };
}
