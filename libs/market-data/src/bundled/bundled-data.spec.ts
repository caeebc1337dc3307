import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findCandleProblems } from '../candle';
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
  'yahoo/BTC-USD_1d': {
    sha256: '23b54bd4e400a2837baa30ae5071de3368cf8fdb40d870733ae1689364532762',
    rows: 2723,
    first: '2014-09-17T00:00:00Z',
    last: '2022-03-01T00:00:00Z',
  },
} as const;

describe('bundled datasets (data/SOURCES.md)', () => {
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

  it('Binance files: every open within 0.3% of the previous close', () => {
    for (const file of ['BTCUSDT_1h.csv', 'ETHUSDT_1h.csv']) {
      const rows = parseCandleCsv(readFileSync(join(DEFAULT_BUNDLED_DATA_DIR, file), 'utf8'), file);
      const jumps = rows.filter((row, i) => {
        const previous = rows[i - 1];
        return previous !== undefined && Math.abs(row.open / previous.close - 1) > 0.003;
      });
      expect(jumps).toEqual([]);
    }
  });
});
