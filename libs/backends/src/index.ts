export * from './backend-config';
export * from './backends';
export * from './account-store.factory';
