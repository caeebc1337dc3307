import 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Emulator endpoints started by the integration global setup. */
    emulators: { firestoreHost: string; pubsubHost: string; projectId: string };
  }
}
