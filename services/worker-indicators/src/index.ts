export * from './config';
export * from './indicator-values';
export * from './indicators.handler';
export * from './indicators.worker';
