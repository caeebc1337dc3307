export * from './flow-run.fixtures';
export * from './flow-run-store.conformance';
export * from './failing-firestore';
export * from './run-change-feed.conformance';
export * from './schedule.fixtures';
export * from './schedule-store.conformance';
export * from './signal-store.conformance';
export * from './step-checkpoint.conformance';
