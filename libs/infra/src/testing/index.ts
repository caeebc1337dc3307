export * from './fake-gcp-api';
