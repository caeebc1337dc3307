import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findCandleProblems, type Candle } from '../candle';
import { DEFAULT_BUNDLED_DATA_DIR } from '../data-dir';
import { fixedDurationMs, formatTimestamp } from '../timeframes';
import { BUNDLED_DATASETS } from './bundled-catalogue';
import { parseCandleCsv } from './candle-csv';

/** What data/SOURCES.md promises about each file; re-checked so that an edited file fails. */
const EXPECTED = {
  'binance/BTCUSDT_1h': {
    sha256: '203f964504f3154533938c0d6ffb62e9f0336a7d731a2d3c24d9bc5a51ecfbb7',
    rows: 4999,
    first: '2026-02-24T04:00:00Z',
    last: '2026-09-20T10:00:00Z',
  },
  'binance/ETHUSDT_1h': {
    sha256: 'd28932f54b70b5698e9359895ad1c7d6a2d2b20335493d1c38f2d2f67a5fafe0',
    rows: 4999,
    first: '2026-02-24T04:00:00Z',
    last: '2026-09-20T10:00:00Z',
  },
  'binance/BTCUSDT_1d': {
    sha256: '5e198c24d7d313a0687b7a79a03d1655f6ce8c452662912815d3c1730923f643',
    rows: 3321,
    first: '2017-08-17T00:00:00Z',
    last: '2026-09-19T00:00:00Z',
  },
  'binance/ETHUSDT_1d': {
    sha256: '33e66ea5210613a5fb73ff0c8927769cd462a45b26dc2ab673998b4f69a9e2bb',
    rows: 3321,
    first: '2017-08-17T00:00:00Z',
    last: '2026-09-19T00:00:00Z',
  },
} as const;

describe('bundled datasets (data/SOURCES.md)', () => {
  it('data/ holds exactly the catalogue files and SOURCES.md (it is copied into the images)', () => {
    const files = Object.values(BUNDLED_DATASETS).map((d) => d.file);
    expect(readdirSync(DEFAULT_BUNDLED_DATA_DIR).sort()).toEqual([...files, 'SOURCES.md'].sort());
  });

  for (const dataset of Object.values(BUNDLED_DATASETS)) {
    const expected = EXPECTED[dataset.id];
    const bytes = readFileSync(join(DEFAULT_BUNDLED_DATA_DIR, dataset.file));
    const rows = parseCandleCsv(bytes.toString('utf8'), dataset.file);

    it(`${dataset.id}: the file is the one SOURCES.md describes`, () => {
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(expected.sha256);
      expect(rows).toHaveLength(expected.rows);
      expect(formatTimestamp(rows[0]?.openTime ?? 0)).toBe(expected.first);
      expect(formatTimestamp(rows.at(-1)?.openTime ?? 0)).toBe(expected.last);
    });

    it(`${dataset.id}: one row per ${dataset.timeframe}, no gaps, sound OHLC, positive values`, () => {
      const step = fixedDurationMs(dataset.timeframe === '1h' ? '1h' : '1d');
      const gaps = rows.filter(
        (row, i) => i > 0 && row.openTime - (rows[i - 1]?.openTime ?? 0) !== step,
      );
      expect(gaps).toEqual([]);
      expect(findCandleProblems(rows)).toEqual([]);
      expect(rows.every((r) => r.open > 0 && r.low > 0 && r.volume > 0)).toBe(true);
    });
  }

  it('every open within 0.3% (hourly files) or 2% (daily files) of the previous close', () => {
    for (const [file, tolerance] of [
      ['BTCUSDT_1h.csv', 0.003],
      ['ETHUSDT_1h.csv', 0.003],
      ['BTCUSDT_1d.csv', 0.02],
      ['ETHUSDT_1d.csv', 0.02],
    ] as const) {
      const rows = rowsOf(file);
      const jumps = rows.filter((row, i) => {
        const previous = rows[i - 1];
        return previous !== undefined && Math.abs(row.open / previous.close - 1) > tolerance;
      });
      expect(jumps).toEqual([]);
    }
  });

  it('one market: each daily file is its hourly file on every shared day and ends where it does', () => {
    for (const pair of ['BTCUSDT', 'ETHUSDT']) {
      const days = rowsOf(`${pair}_1d.csv`);
      const hours = rowsOf(`${pair}_1h.csv`);
      const hourAt = new Map(hours.map((h) => [h.openTime, h]));
      const DAY = fixedDurationMs('1d');
      const HOUR = fixedDurationMs('1h');
      const shared = days.filter(
        (d) => hourAt.has(d.openTime) && hourAt.has(d.openTime + DAY - HOUR),
      );
      expect(shared).toHaveLength(207); // 2026-02-25 .. 2026-09-19
      const mismatches = shared.filter(
        (d) =>
          hourAt.get(d.openTime)?.open !== d.open ||
          hourAt.get(d.openTime + DAY - HOUR)?.close !== d.close,
      );
      expect(mismatches).toEqual([]);
      // the last daily row is the last complete day of the hourly file (2026-09-20 has 11 hours)
      const lastHour = hours.at(-1)?.openTime ?? 0;
      expect(days.at(-1)?.openTime).toBe(Math.floor(lastHour / DAY) * DAY - DAY);
    }
    expect(rowsOf('BTCUSDT_1d.csv').map((r) => r.openTime)).toEqual(
      rowsOf('ETHUSDT_1d.csv').map((r) => r.openTime),
    );
  });
});

function rowsOf(file: string): Candle[] {
  return parseCandleCsv(readFileSync(join(DEFAULT_BUNDLED_DATA_DIR, file), 'utf8'), file);
}
