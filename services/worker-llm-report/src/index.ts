export * from './config';
export * from './llm-report.handler';
export * from './llm-report.factory';
export * from './worker-llm-report.bootstrap';
