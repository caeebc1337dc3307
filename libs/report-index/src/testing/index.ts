export * from './report-index.fixtures';
export * from './report-index-store.conformance';
