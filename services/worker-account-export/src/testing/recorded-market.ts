import type { CcxtExchangeLike } from '@tda/market-data';

export const HOUR = 3_600_000;
/** 2026-09-20 08:00 UTC: the first of the recorded klines. */
export const T = Date.parse('2026-09-20T08:00:00Z');

/** Binance hourly klines 2026-09-20 08:00..10:00 UTC (as recorded in the bundled files). */
const KLINES: Readonly<Record<string, number[][]>> = {
  'BTC/USDT': [
    [T, 80311.6, 80453.9, 80165.49, 80264.85, 288.38791],
    [T + HOUR, 80264.85, 80581.82, 80256.82, 80470.01, 215.53752],
    [T + 2 * HOUR, 80470.01, 80515.83, 80319.58, 80319.58, 199.82514],
  ],
  'ETH/USDT': [
    [T, 2580.1, 2584.0, 2572.3, 2575.19, 6120.1],
    [T + HOUR, 2575.19, 2587.39, 2575.0, 2579.77, 5407.5044],
    [T + 2 * HOUR, 2579.77, 2581.49, 2570.7, 2571.21, 6506.1085],
  ],
};

/**
 * A recorded-style exchange for the marks (TDA_MARKET_DATA=ccxt): BTC/USDT and ETH/USDT spot
 * markets answering fetchOHLCV with the klines above up to `since + limit` hours.
 */
export const recordedMarket: CcxtExchangeLike = {
  id: 'binance',
  timeframes: { '1h': '1h', '4h': '4h', '1d': '1d', '1w': '1w', '1M': '1M' },
  loadMarkets: async () => ({
    'BTC/USDT': { id: 'BTCUSDT', symbol: 'BTC/USDT', base: 'BTC', quote: 'USDT', spot: true },
    'ETH/USDT': { id: 'ETHUSDT', symbol: 'ETH/USDT', base: 'ETH', quote: 'USDT', spot: true },
  }),
  fetchOHLCV: async (symbol, _timeframe, since) =>
    (KLINES[symbol] ?? []).filter((row) => since === undefined || (row[0] ?? 0) >= since),
};
