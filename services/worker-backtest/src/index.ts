export * from './config';
export * from './backtest-job';
export * from './backtest-result';
export * from './backtest.handler';
export * from './backtest.worker';
export * from './snapshot-cadence';
