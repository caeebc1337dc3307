export * from './config';
export * from './llm-report-file';
export * from './llm-report.handler';
export * from './llm-report.factory';
export * from './llm-report.worker';
