export * from './bundled-candles';
