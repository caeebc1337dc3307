import { BundledCandleSource, isTimeframe, type CcxtExchangeLike } from '@tda/market-data';

export const HOUR = 3_600_000;
/** 2026-09-20 08:00 UTC: the first of the recorded klines. */
export const T = Date.parse('2026-09-20T08:00:00Z');

const MARKETS = {
  'BTC/USDT': { id: 'BTCUSDT', symbol: 'BTC/USDT', base: 'BTC', quote: 'USDT', spot: true },
  'ETH/USDT': { id: 'ETHUSDT', symbol: 'ETH/USDT', base: 'ETH', quote: 'USDT', spot: true },
};
const TIMEFRAMES = { '1h': '1h', '4h': '4h', '1d': '1d', '1w': '1w', '1M': '1M' };

/**
 * A recorded-style exchange: the last three Binance hourly klines of the bundled BTCUSDT file
 * (2026-09-20 08:00..10:00 UTC), whatever is asked.
 */
export const recordedExchange: CcxtExchangeLike = {
  id: 'binance',
  timeframes: TIMEFRAMES,
  loadMarkets: async () => ({ 'BTC/USDT': MARKETS['BTC/USDT'] }),
  fetchOHLCV: async () => [
    [T, 80311.6, 80453.9, 80165.49, 80264.85, 288.38791],
    [T + HOUR, 80264.85, 80581.82, 80256.82, 80470.01, 215.53752],
    [T + 2 * HOUR, 80470.01, 80515.83, 80319.58, 80319.58, 199.82514],
  ],
};

export interface ReplayedCall {
  timeframe: string | undefined;
  since: number | undefined;
  limit: number | undefined;
}

/**
 * Binance replayed from the bundled datasets as if the clock said `now`: BTC/USDT and ETH/USDT in
 * every timeframe, the bucket holding `now` as the forming kline (its whole source row, so data
 * from after `now`: a source cutting at asOf must not use it), `since`/`limit` answered like
 * Binance (no since: the newest `limit`; else the first `limit` from since).
 */
export function replayExchange(now: number): CcxtExchangeLike & { calls: ReplayedCall[] } {
  const bundled = new BundledCandleSource();
  const calls: ReplayedCall[] = [];
  return {
    id: 'binance',
    timeframes: TIMEFRAMES,
    calls,
    loadMarkets: async () => MARKETS,
    fetchOHLCV: async (symbol, timeframe = '1m', since, limit = 500) => {
      calls.push({ timeframe, since, limit });
      if (!isTimeframe(timeframe)) throw new Error(`no ${timeframe} klines`);
      const { candles } = await bundled.fetchCandles({
        symbol,
        timeframe,
        to: now + 1,
        incompleteBucketPolicy: 'marked',
      });
      const served =
        since === undefined
          ? candles.slice(-limit)
          : candles.filter((c) => c.openTime >= since).slice(0, limit);
      return served.map((c) => [c.openTime, c.open, c.high, c.low, c.close, c.volume]);
    },
  };
}
