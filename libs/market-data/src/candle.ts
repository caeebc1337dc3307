import type { OhlcvSource, Timeframe } from '@tda/contracts';

/** One OHLCV candle. `openTime` is epoch milliseconds (UTC) of the bucket start. */
export interface Candle {
  openTime: number;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
  /**
   * false only on the still-forming last candle under incompleteBucketPolicy 'marked' (the
   * ohlcv_export contract); absent means complete.
   */
  complete?: false;
}

/**
 * What happens to the still-forming last bucket (ohlcv_export.incompleteBucketPolicy):
 * 'dropped' leaves it out, 'marked' keeps it with `complete: false`.
 */
export type IncompleteBucketPolicy = 'dropped' | 'marked';

export const INCOMPLETE_BUCKET_POLICIES: readonly IncompleteBucketPolicy[] = ['dropped', 'marked'];

/** Candles of one symbol and timeframe, ascending by openTime, with where they came from. */
export interface CandleSeries {
  /** The symbol as requested. */
  symbol: string;
  timeframe: Timeframe;
  candles: Candle[];
  /** ohlcv_export `source`: provider, dataset|exchange, marketSymbol, sourceTimeframe, volumeUnit. */
  source: OhlcvSource;
  incompleteBucketPolicy: IncompleteBucketPolicy;
}

/**
 * Problems with a candle sequence: not ascending, duplicate buckets, negative values or a high/low
 * that does not bracket open and close. Empty when the series is sound.
 */
export function findCandleProblems(candles: readonly Candle[]): string[] {
  const problems: string[] = [];
  let previous: number | undefined;
  candles.forEach((c, i) => {
    const where = `candle ${i} (${new Date(c.openTime).toISOString()})`;
    const values = [c.open, c.high, c.low, c.close, c.volume];
    if (!Number.isFinite(c.openTime) || values.some((v) => !Number.isFinite(v))) {
      problems.push(`${where}: non-finite value`);
    } else if (values.some((v) => v < 0)) {
      problems.push(`${where}: negative value`);
    } else if (c.high < Math.max(c.open, c.close) || c.low > Math.min(c.open, c.close)) {
      problems.push(`${where}: high/low do not bracket open/close`);
    }
    if (previous !== undefined && c.openTime <= previous) {
      problems.push(`${where}: openTime not after the previous candle`);
    }
    previous = c.openTime;
  });
  return problems;
}
