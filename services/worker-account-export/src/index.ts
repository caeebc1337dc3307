export * from './config';
export * from './account-valuation';
export * from './account-export.handler';
export * from './account-export.factory';
export * from './account-export.worker';
