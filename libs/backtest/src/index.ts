export * from './backtest.errors';
export * from './candle-arrays';
export * from './indicators';
export * from './indicator-cache';
export * from './strategies';
export * from './simulate';
