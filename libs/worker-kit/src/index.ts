export * from './step-handler';
export * from './step-errors';
