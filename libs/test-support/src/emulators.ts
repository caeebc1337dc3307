import './provided-context';
import { inject } from 'vitest';

export interface EmulatorEndpoints {
  firestoreHost: string;
  pubsubHost: string;
  projectId: string;
}

/** Endpoints of the emulators started by tools/test/emulators.global-setup.ts. */
export function emulatorEndpoints(): EmulatorEndpoints {
  return inject('emulators');
}

/** A collection/topic prefix unique to one test, so parallel files never see each other's data. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}
