export * from './patch';
export * from './errors';
export * from './ids';
export * from './dag';
export * from './run-status';
