export * from './log-events';
export * from './log-context';
export * from './trace-context';
export * from './redaction';
export * from './logger';
export * from './memory-logger';
export * from './metrics';
