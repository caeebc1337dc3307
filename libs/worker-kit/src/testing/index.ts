export * from './counting-flow-run.store';
export * from './counting-artifact.store';
export * from './test-step.handler';
export * from './recording.publisher';
export * from './memory-worker-env';
export * from './handler-context';
export * from './deliver-step';
