export * from './indicators.fixtures';
