import type { Candle } from '../candle';
import { MarketDataError } from '../market-data.errors';

/** A bundled CSV file that does not parse: a packaging defect, reported with file and line. */
export class CandleCsvError extends MarketDataError {
  constructor(
    readonly file: string,
    readonly line: number,
    reason: string,
  ) {
    super('MARKET_DATA_UNAVAILABLE', `${file}:${line}: ${reason}`, {
      details: { file, line },
      retryable: false,
    });
  }
}

const DATETIME = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const NUMBER = /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/;

/**
 * Parses candle CSV files by header name (case-insensitive):
 * - Binance (every bundled file): `datetime,open,high,low,close,volume`, datetime
 *   `YYYY-MM-DD HH:MM:SS` in UTC;
 * - Yahoo-style exports: `Date,Open,High,Low,Close,Adj Close,Volume`, date `YYYY-MM-DD` (a UTC day).
 * Other columns (Adj Close) are ignored. Strict: any malformed row throws CandleCsvError.
 */
export function parseCandleCsv(text: string, file: string): Candle[] {
  const lines = text.split(/\r?\n/);
  const header = (lines[0] ?? '').split(',').map((h) => h.trim().toLowerCase());
  const column = (name: string): number => {
    const index = header.indexOf(name);
    if (index < 0) throw new CandleCsvError(file, 1, `missing column '${name}'`);
    return index;
  };
  const timeIndex = header.includes('datetime') ? column('datetime') : column('date');
  const indexes = {
    open: column('open'),
    high: column('high'),
    low: column('low'),
    close: column('close'),
    volume: column('volume'),
  };

  const candles: Candle[] = [];
  lines.slice(1).forEach((line, i) => {
    if (line.trim() === '') return;
    const lineNumber = i + 2;
    const fields = line.split(',');
    const number = (index: number, name: string): number => {
      const raw = (fields[index] ?? '').trim();
      if (!NUMBER.test(raw)) throw new CandleCsvError(file, lineNumber, `bad ${name} '${raw}'`);
      return Number(raw);
    };
    candles.push({
      openTime: parseTime((fields[timeIndex] ?? '').trim(), file, lineNumber),
      open: number(indexes.open, 'open'),
      high: number(indexes.high, 'high'),
      low: number(indexes.low, 'low'),
      close: number(indexes.close, 'close'),
      volume: number(indexes.volume, 'volume'),
    });
  });
  return candles;
}

function parseTime(raw: string, file: string, line: number): number {
  const datetime = DATETIME.exec(raw);
  const iso = datetime
    ? `${datetime[1]}T${datetime[2]}Z`
    : DATE.test(raw)
      ? `${raw}T00:00:00Z`
      : undefined;
  const time = iso === undefined ? NaN : Date.parse(iso);
  if (Number.isNaN(time)) throw new CandleCsvError(file, line, `bad time '${raw}'`);
  return time;
}
