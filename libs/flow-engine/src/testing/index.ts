export * from './run-fixtures';
export * from './dag-arbitrary';
export * from './simulation';
export * from './schedule-fixtures';
