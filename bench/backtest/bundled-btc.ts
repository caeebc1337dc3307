import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CandleLike } from '@tda/backtest';

export const HOUR_MS = 3_600_000;

/** The bundled Binance BTCUSDT 1h candles (libs/market-data/data), read straight from the CSV. */
export function loadBundledBtc1h(): CandleLike[] {
  const file = join(__dirname, '..', '..', 'libs', 'market-data', 'data', 'BTCUSDT_1h.csv');
  const [, ...rows] = readFileSync(file, 'utf8').trim().split('\n');
  return rows.map((row) => {
    const [datetime = '', open, high, low, close, volume] = row.split(',');
    return {
      openTime: Date.parse(`${datetime.replace(' ', 'T')}Z`),
      open: Number(open),
      high: Number(high),
      low: Number(low),
      close: Number(close),
      volume: Number(volume),
    };
  });
}
