import type { TestProject } from 'vitest/node';
import '../../libs/test-support/src/provided-context';
import { startEmulators, type RunningEmulators } from '../../libs/emulators/src/emulators';

/**
 * Vitest global setup for the integration project: starts the Firestore and Pub/Sub emulators
 * from google-cloud-cli on free loopback ports once per test run and stops them afterwards.
 * Tests read the hosts with `inject('emulators')`; nothing here touches process.env of the
 * services, so the code under test gets its endpoints through config exactly as in production.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
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
