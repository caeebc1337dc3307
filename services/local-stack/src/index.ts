export * from './local-stack';
export * from './local-stack.config';
export * from './demo';
export * from './local-workers';
