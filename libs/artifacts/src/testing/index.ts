export * from './artifact-store.conformance';
