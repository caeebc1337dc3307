import { FirestoreAccountStore, InMemoryAccountStore, type AccountStore } from '@tda/accounts';
import { createFirestore } from '@tda/flow-store';
import type { BackendConfig } from './backend-config';

export interface OpenedAccountStore {
  store: AccountStore;
  /** Ends the store's own Firestore client (nothing in memory mode). */
  close(): Promise<void>;
}

/**
 * An AccountStore for the configured backend, on a client of its own: for a service that needs
 * accounts but not the rest of createBackends (the ACCOUNT_EXPORT worker builds its handler
 * before its backends open). Memory mode gives an empty store of this process: processes share
 * memory-mode accounts only when the composer passes one store to all (`Backends.accounts`).
 */
export function openAccountStore(
  config: Pick<BackendConfig, 'TDA_BACKEND' | 'GOOGLE_CLOUD_PROJECT' | 'FIRESTORE_EMULATOR_HOST'>,
): OpenedAccountStore {
  if (config.TDA_BACKEND === 'memory') {
    return { store: new InMemoryAccountStore(), close: () => Promise.resolve() };
  }
  const firestore = createFirestore({
    projectId: config.GOOGLE_CLOUD_PROJECT,
    ...(config.TDA_BACKEND === 'emulators' && config.FIRESTORE_EMULATOR_HOST !== undefined
      ? { emulatorHost: config.FIRESTORE_EMULATOR_HOST }
      : {}),
  });
  return { store: new FirestoreAccountStore(firestore), close: () => firestore.terminate() };
}
