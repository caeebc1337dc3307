export * from './indicator-catalogue';
export * from './indicator-request';
export * from './expand-indicators';
export * from './expand-run';
