export * from './contract-files';
