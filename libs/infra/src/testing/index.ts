export * from './fake-gcp-api';
export * from './fake-identity-routes';
export * from './fake-platform-routes';
export * from './test-environment';
export * from './llm-workers';
