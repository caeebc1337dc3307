export * from './fake-gcp-api';
export * from './fake-identity-routes';
