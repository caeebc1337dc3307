export * from './backend-config';
export * from './backends';
