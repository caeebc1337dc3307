export * from './flow-run.fixtures';
export * from './flow-run-store.conformance';
export * from './failing-firestore';
export * from './run-change-feed.conformance';
