export * from './artifact-store.conformance';
export * from './fake-gcs.server';
