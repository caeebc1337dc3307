import type { Candle } from '../candle';
import { BundledCandleSource } from '../bundled/bundled-candle.source';
import type { CcxtExchangeLike, CcxtMarketLike } from '../ccxt/ccxt-candle.source';
import { isTimeframe } from '../timeframes';

export interface ReplayCall {
  symbol: string;
  timeframe: string | undefined;
  since: number | undefined;
  limit: number | undefined;
}

const MARKETS: Record<string, CcxtMarketLike> = {
  'BTC/USDT': { id: 'BTCUSDT', symbol: 'BTC/USDT', base: 'BTC', quote: 'USDT', spot: true },
  'ETH/USDT': { id: 'ETHUSDT', symbol: 'ETH/USDT', base: 'ETH', quote: 'USDT', spot: true },
};

/**
 * A ccxt-like Binance replaying the bundled Binance datasets as if the clock said `now`: every
 * timeframe is served natively (1h/4h from the hourly files, 1d/1w/1M from the daily files),
 * with the bucket holding `now` as the still-forming kline, and `since`/`limit` answered like
 * Binance (no since: the newest `limit` klines; else the first `limit` from `since`).
 *
 * The forming kline is built from the whole source row that holds `now` (the replay cannot split
 * a row), so it holds data from after `now`: a source that cuts at asOf must never use it, and
 * the tests would see its values if it did.
 */
export class BundledReplayExchange implements CcxtExchangeLike {
  readonly id = 'binance';
  readonly timeframes = { '1h': '1h', '4h': '4h', '1d': '1d', '1w': '1w', '1M': '1M' };
  readonly calls: ReplayCall[] = [];
  private readonly source = new BundledCandleSource();

  constructor(private readonly now: number) {}

  async loadMarkets(): Promise<Record<string, CcxtMarketLike>> {
    return MARKETS;
  }

  async fetchOHLCV(
    symbol: string,
    timeframe = '1m',
    since?: number,
    limit = 500,
  ): Promise<number[][]> {
    this.calls.push({ symbol, timeframe, since, limit });
    if (!isTimeframe(timeframe)) throw new Error(`no ${timeframe} klines`);
    const { candles } = await this.source.fetchCandles({
      symbol,
      timeframe,
      to: this.now + 1,
      incompleteBucketPolicy: 'marked',
    });
    const served =
      since === undefined
        ? candles.slice(-limit)
        : candles.filter((c) => c.openTime >= since).slice(0, limit);
    return served.map(toRow);
  }
}

function toRow(c: Candle): number[] {
  return [c.openTime, c.open, c.high, c.low, c.close, c.volume];
}
