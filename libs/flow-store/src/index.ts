export * from './flow-run-store.port';
export * from './flow-store.errors';
export * from './conditional-update';
export * from './in-memory-flow-run.store';
export * from './firestore-flow-run.store';
export * from './firestore-client.factory';
export * from './run-change-feed.port';
export * from './firestore-status';
