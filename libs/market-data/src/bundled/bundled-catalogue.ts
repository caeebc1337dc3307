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
  /** 'base' = volume in the base asset (BTC, ETH); 'quote' = in the quote currency (USDT). */
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
  'binance/BTCUSDT_1d': {
    id: 'binance/BTCUSDT_1d',
    file: 'BTCUSDT_1d.csv',
    timeframe: '1d',
    marketSymbol: 'BTCUSDT',
    volumeUnit: 'base',
  },
  'binance/ETHUSDT_1d': {
    id: 'binance/ETHUSDT_1d',
    file: 'ETHUSDT_1d.csv',
    timeframe: '1d',
    marketSymbol: 'ETHUSDT',
    volumeUnit: 'base',
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
 * The symbol catalogue: one market per symbol (Binance spot), so every timeframe of a run
 * describes the same market. 1h and 4h come from the hourly files (2026-02-24 .. 2026-09-20); 1d,
 * 1w and 1M from the daily files (2017-08-17 .. 2026-09-19), which end on the last complete day
 * of the hourly files: with the default asOf (resolveAsOf) every timeframe of both symbols ends at
 * 2026-09-20T00:00:00Z. 1d is native in the daily files (exactly the hourly aggregates, see
 * data/SOURCES.md) and reaches back to 2017.
 */
export const BUNDLED_SYMBOLS: readonly BundledSymbol[] = [
  {
    symbol: 'BTC-USDT',
    aliases: ['BTCUSDT', 'BTC/USDT'],
    datasets: {
      '1h': 'binance/BTCUSDT_1h',
      '4h': 'binance/BTCUSDT_1h',
      '1d': 'binance/BTCUSDT_1d',
      '1w': 'binance/BTCUSDT_1d',
      '1M': 'binance/BTCUSDT_1d',
    },
  },
  {
    symbol: 'ETH-USDT',
    aliases: ['ETHUSDT', 'ETH/USDT'],
    datasets: {
      '1h': 'binance/ETHUSDT_1h',
      '4h': 'binance/ETHUSDT_1h',
      '1d': 'binance/ETHUSDT_1d',
      '1w': 'binance/ETHUSDT_1d',
      '1M': 'binance/ETHUSDT_1d',
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
