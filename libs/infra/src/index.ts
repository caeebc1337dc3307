export * from './deploy-environments';
export * from './deployment-model';
export * from './infra.errors';
export * from './gcp/gcp-rest.client';
export * from './plan';
export * from './gcp/identity';
