export * from './fake-gcp-api';
export * from './fake-identity-routes';
export * from './fake-platform-routes';
