export * from './flow-run.fixtures';
export * from './flow-run-store.conformance';
