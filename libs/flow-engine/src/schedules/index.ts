export * from './cron';
export * from './schedule-ids';
export * from './schedule-changes';
export * from './tick';
export * from './schedule-lifecycle';
export * from './signal';
