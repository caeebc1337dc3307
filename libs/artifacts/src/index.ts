export * from './artifact-store.port';
export * from './artifacts.errors';
export * from './artifact-request';
export * from './content-hash';
export * from './gcs-uri';
export * from './in-memory-artifact.store';
export * from './local-artifact.store';
export * from './gcs-artifact.store';
