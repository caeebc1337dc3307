import { Firestore } from '@google-cloud/firestore';

export interface FirestoreClientOptions {
  projectId: string;
  /** `host:port` of the Firestore emulator; omit to use the real service with ADC. */
  emulatorHost?: string;
}

/**
 * Builds the Firestore client from explicit options (library code never reads the process environment;
 * services pass values from @tda/config). With an emulator host the connection is plaintext and
 * authenticated as the emulator's admin ("Bearer owner"); otherwise Application Default
 * Credentials are used.
 */
export function createFirestore(options: FirestoreClientOptions): Firestore {
  if (options.emulatorHost !== undefined && options.emulatorHost !== '') {
    return new Firestore({
      projectId: options.projectId,
      host: options.emulatorHost,
      ssl: false,
      customHeaders: { Authorization: 'Bearer owner' },
    });
  }
  return new Firestore({ projectId: options.projectId });
}
