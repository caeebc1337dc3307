export * from './deploy-environments';
export * from './deployment-model';
export * from './infra.errors';
