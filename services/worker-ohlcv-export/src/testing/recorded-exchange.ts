import type { CcxtExchangeLike } from '@tda/market-data';

export const HOUR = 3_600_000;
/** 2026-09-20 08:00 UTC: the first of the recorded klines. */
export const T = Date.parse('2026-09-20T08:00:00Z');

/** A recorded-style exchange: three Binance hourly klines (2026-09-20 08:00..10:00 UTC). */
export const recordedExchange: CcxtExchangeLike = {
  id: 'binance',
  timeframes: { '1h': '1h', '4h': '4h', '1d': '1d', '1w': '1w', '1M': '1M' },
  loadMarkets: async () => ({
    'BTC/USDT': { id: 'BTCUSDT', symbol: 'BTC/USDT', base: 'BTC', quote: 'USDT', spot: true },
  }),
  fetchOHLCV: async () => [
    [T, 80311.6, 80581.82, 80165.49, 80542.27, 288.31],
    [T + HOUR, 80264.85, 80581.82, 80256.82, 80470.01, 215.53752],
    [T + 2 * HOUR, 80470.01, 80515.83, 80319.58, 80319.58, 199.82514],
  ],
};
