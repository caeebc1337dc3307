export * from './chart-export.fixtures';
