export * from './config';
export * from './ohlcv-export.handler';
export * from './ohlcv-export.factory';
export * from './ohlcv-export.worker';
