import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { OhlcvSource, Timeframe } from '@tda/contracts';
import type { Candle, CandleSeries } from '../candle';
import { assertValidRequest } from '../candle-request';
import { assertAsOfCovered } from '../as-of';
import type { CandleSource, DataCoverage, FetchCandlesRequest } from '../candle-source.port';
import { DEFAULT_BUNDLED_DATA_DIR } from '../data-dir';
import {
  MarketDataUnavailableError,
  UnknownSymbolError,
  UnsupportedTimeframeError,
} from '../market-data.errors';
import { applyIncompleteBucketPolicy, resample } from '../resample';
import { nextBucketStart } from '../timeframes';
import {
  BUNDLED_DATASETS,
  BUNDLED_SYMBOLS,
  bundledTimeframes,
  findBundledSymbol,
  type BundledDataset,
  type BundledSymbol,
} from './bundled-catalogue';
import { parseCandleCsv } from './candle-csv';

export interface BundledCandleSourceOptions {
  /** Directory holding the CSV files. Default: libs/market-data/data. */
  dataDir?: string;
  /** Symbol catalogue; default BUNDLED_SYMBOLS. */
  catalogue?: readonly BundledSymbol[];
}

/**
 * Serves the real historical datasets shipped with the project (no network, no credentials),
 * resampled from their native 1h/1d rows to the requested timeframe. Files are parsed once per
 * instance, on first use. Deterministic: the same request always gives the same candles.
 */
export class BundledCandleSource implements CandleSource {
  readonly provider = 'bundled' as const;
  private readonly dataDir: string;
  private readonly catalogue: readonly BundledSymbol[];
  private readonly loaded = new Map<string, Promise<Candle[]>>();

  constructor(options: BundledCandleSourceOptions = {}) {
    this.dataDir = options.dataDir ?? DEFAULT_BUNDLED_DATA_DIR;
    this.catalogue = options.catalogue ?? BUNDLED_SYMBOLS;
  }

  async listSymbols(): Promise<string[]> {
    return this.symbols();
  }

  async availableTimeframes(symbol: string): Promise<Timeframe[]> {
    return bundledTimeframes(this.entry(symbol));
  }

  async coverage(symbol: string, timeframe: Timeframe): Promise<DataCoverage> {
    const entry = this.entry(symbol);
    const dataset = this.datasetFor(entry, symbol, timeframe);
    return coverageOf(entry, timeframe, dataset, await this.load(dataset));
  }

  async fetchCandles(request: FetchCandlesRequest): Promise<CandleSeries> {
    assertValidRequest(request);
    const { symbol, timeframe, from, to, asOf, limit, signal } = request;
    const policy = request.incompleteBucketPolicy ?? 'dropped';
    const entry = this.entry(symbol);
    const dataset = this.datasetFor(entry, symbol, timeframe);
    const all = await this.load(dataset);
    signal?.throwIfAborted();
    if (asOf !== undefined) assertAsOfCovered(coverageOf(entry, timeframe, dataset, all), asOf);

    // asOf: only rows that ENDED by then; the bucket holding asOf is then cut, so incomplete.
    const rows = all.filter(
      (row) =>
        (from === undefined || row.openTime >= from) &&
        (to === undefined || row.openTime < to) &&
        (asOf === undefined || nextBucketStart(row.openTime, dataset.timeframe) <= asOf),
    );
    const last = rows[rows.length - 1];
    const dataEnd =
      last === undefined ? undefined : nextBucketStart(last.openTime, dataset.timeframe);
    const buckets = resample(rows, {
      from: dataset.timeframe,
      to: timeframe,
      ...(to !== undefined && dataEnd !== undefined ? { coverageEnd: Math.min(to, dataEnd) } : {}),
    });
    const candles = applyIncompleteBucketPolicy(buckets, policy);

    const source: OhlcvSource = {
      provider: 'bundled',
      dataset: dataset.id,
      marketSymbol: dataset.marketSymbol,
      ...(dataset.timeframe === timeframe ? {} : { sourceTimeframe: dataset.timeframe }),
      volumeUnit: dataset.volumeUnit,
    };
    return {
      symbol,
      timeframe,
      candles: limit === undefined ? candles : candles.slice(-limit),
      source,
      incompleteBucketPolicy: policy,
    };
  }

  private datasetFor(entry: BundledSymbol, symbol: string, timeframe: Timeframe): BundledDataset {
    const datasetId = entry.datasets[timeframe];
    if (datasetId === undefined) {
      throw new UnsupportedTimeframeError(symbol, timeframe, bundledTimeframes(entry));
    }
    return BUNDLED_DATASETS[datasetId];
  }

  private symbols(): string[] {
    return this.catalogue.map((entry) => entry.symbol).sort();
  }

  private entry(symbol: string): BundledSymbol {
    const entry = findBundledSymbol(symbol, this.catalogue);
    if (entry === undefined) {
      throw new UnknownSymbolError(symbol, this.symbols(), {
        hint: 'symbols match ignoring case and the separator: BTC-USDT = BTC/USDT = BTCUSDT',
      });
    }
    return entry;
  }

  private load(dataset: BundledDataset): Promise<Candle[]> {
    let pending = this.loaded.get(dataset.id);
    if (pending === undefined) {
      const path = join(this.dataDir, dataset.file);
      pending = readFile(path, 'utf8').then(
        (text) => parseCandleCsv(text, dataset.file),
        (error: unknown) => {
          throw new MarketDataUnavailableError(
            `bundled dataset ${dataset.id} is missing (${dataset.file} in ${this.dataDir})`,
            { dataset: dataset.id, file: dataset.file },
            { retryable: false, cause: error },
          );
        },
      );
      // A failed load is not cached: a fixed data directory works on the next call.
      pending.catch(() => this.loaded.delete(dataset.id));
      this.loaded.set(dataset.id, pending);
    }
    return pending;
  }
}

/** Data exists for [first row, end of the last row) of the dataset serving the timeframe. */
function coverageOf(
  entry: BundledSymbol,
  timeframe: Timeframe,
  dataset: BundledDataset,
  rows: readonly Candle[],
): DataCoverage {
  const first = rows[0];
  const last = rows[rows.length - 1];
  if (first === undefined || last === undefined) {
    throw new MarketDataUnavailableError(
      `bundled dataset ${dataset.id} has no rows`,
      { dataset: dataset.id, file: dataset.file },
      { retryable: false },
    );
  }
  return {
    symbol: entry.symbol,
    timeframe,
    from: first.openTime,
    to: nextBucketStart(last.openTime, dataset.timeframe),
    source: `bundled dataset ${dataset.id}`,
  };
}
