export * from './config';
export * from './chart-export.handler';
export * from './chart-export.factory';
export * from './charts-manifest';
export * from './chart-export.worker';
