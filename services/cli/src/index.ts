export * from './api-client';
export * from './cli';
export * from './cli-config';
export * from './llm-seed';
export * from './report-view';
export * from './run-view';
export * from './watch';
