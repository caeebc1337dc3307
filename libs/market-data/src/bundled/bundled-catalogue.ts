import { TIMEFRAMES, type Timeframe } from '@tda/contracts';
import { compactSymbol } from '../symbols';

/** A real historical dataset shipped in libs/market-data/data (see data/SOURCES.md). */
export interface BundledDataset {
  /** ohlcv_export source.dataset, e.g. binance/BTCUSDT_1h. */
  id: string;
  /** File name under the data directory. */
  file: string;
  /** Timeframe of the rows. */
  timeframe: Timeframe;
  /** The symbol as the provider spells it (ohlcv_export source.marketSymbol). */
  marketSymbol: string;
  /** 'base' = volume in the base asset (BTC, ETH); 'quote' = in the quote currency (USD). */
  volumeUnit: 'base' | 'quote';
}

export const BUNDLED_DATASETS = {
  'binance/BTCUSDT_1h': {
    id: 'binance/BTCUSDT_1h',
    file: 'BTCUSDT_1h.csv',
    timeframe: '1h',
    marketSymbol: 'BTCUSDT',
    volumeUnit: 'base',
  },
  'binance/ETHUSDT_1h': {
    id: 'binance/ETHUSDT_1h',
    file: 'ETHUSDT_1h.csv',
    timeframe: '1h',
    marketSymbol: 'ETHUSDT',
    volumeUnit: 'base',
  },
  'yahoo/BTC-USD_1d': {
    id: 'yahoo/BTC-USD_1d',
    file: 'BTC-USD_1d.csv',
    timeframe: '1d',
    marketSymbol: 'BTC-USD',
    volumeUnit: 'quote',
  },
} as const satisfies Record<string, BundledDataset>;

export type BundledDatasetId = keyof typeof BUNDLED_DATASETS;

/** One tradable symbol of the bundled catalogue: which dataset serves each timeframe. */
export interface BundledSymbol {
  /** Canonical spelling, BASE-QUOTE. */
  symbol: string;
  /** Other accepted spellings (matching ignores case and the '-' or '/' separator anyway). */
  aliases: readonly string[];
  datasets: Partial<Record<Timeframe, BundledDatasetId>>;
}

/**
 * The symbol catalogue. BTC-USDT weekly and monthly come from the long Yahoo BTC-USD daily
 * history (2014-09 .. 2022-03): the Binance hourly file covers only ~7 months (6 whole months,
 * 28 whole weeks), too short for a monthly chart, and flow 1's weekly report builds on its monthly
 * report, so both must describe the same period. USD and USDT are treated as equivalent for
 * charting; the artifact's `source` says honestly which dataset and market symbol were used.
 */
export const BUNDLED_SYMBOLS: readonly BundledSymbol[] = [
  {
    symbol: 'BTC-USD',
    aliases: ['BTCUSD', 'BTC/USD'],
    datasets: { '1d': 'yahoo/BTC-USD_1d', '1w': 'yahoo/BTC-USD_1d', '1M': 'yahoo/BTC-USD_1d' },
  },
  {
    symbol: 'BTC-USDT',
    aliases: ['BTCUSDT', 'BTC/USDT'],
    datasets: {
      '1h': 'binance/BTCUSDT_1h',
      '4h': 'binance/BTCUSDT_1h',
      '1d': 'binance/BTCUSDT_1h',
      '1w': 'yahoo/BTC-USD_1d',
      '1M': 'yahoo/BTC-USD_1d',
    },
  },
  {
    symbol: 'ETH-USDT',
    aliases: ['ETHUSDT', 'ETH/USDT'],
    datasets: {
      '1h': 'binance/ETHUSDT_1h',
      '4h': 'binance/ETHUSDT_1h',
      '1d': 'binance/ETHUSDT_1h',
      '1w': 'binance/ETHUSDT_1h',
      '1M': 'binance/ETHUSDT_1h',
    },
  },
];

/** The catalogue entry for a user-written symbol, or undefined. */
export function findBundledSymbol(
  symbol: string,
  catalogue: readonly BundledSymbol[] = BUNDLED_SYMBOLS,
): BundledSymbol | undefined {
  const key = compactSymbol(symbol);
  return catalogue.find((entry) => compactSymbol(entry.symbol) === key);
}

/** Timeframes a catalogue entry serves, in the canonical order 1h, 4h, 1d, 1w, 1M. */
export function bundledTimeframes(entry: BundledSymbol): Timeframe[] {
  return TIMEFRAMES.filter((tf) => entry.datasets[tf] !== undefined);
}
