export * from './artifact-store.port';
