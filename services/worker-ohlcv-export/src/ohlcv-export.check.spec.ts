import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { OhlcvCandle, OhlcvExport } from '@tda/contracts';
import { ohlcvExportProblem } from '@tda/step-types';
import { describe, expect, it } from 'vitest';

/** The descriptor check the harness runs on every export it writes or reads (ohlcvExportProblem). */
const EXAMPLES = join(__dirname, '../../../contracts/examples');
const example = (file: string): OhlcvExport =>
  JSON.parse(readFileSync(join(EXAMPLES, file), 'utf8')) as OhlcvExport;

const candle = (openTime: string, complete?: false): OhlcvCandle => ({
  openTime,
  open: 10,
  high: 11,
  low: 9,
  close: 10,
  volume: 1,
  ...(complete === false ? { complete } : {}),
});

function exportOf(
  timeframe: OhlcvExport['timeframe'],
  asOf: string,
  candles: OhlcvCandle[],
): OhlcvExport {
  const [first] = candles;
  if (first === undefined) throw new Error('no candles');
  return {
    ...example('ohlcv_export.example.json'),
    timeframe,
    asOf,
    candles: [first, ...candles.slice(1)],
    candleCount: candles.length,
  };
}

describe('ohlcvExportProblem: no candle after asOf', () => {
  it('accepts both contract examples', () => {
    expect(ohlcvExportProblem(example('ohlcv_export.example.json'))).toBeUndefined();
    expect(ohlcvExportProblem(example('ohlcv_export.1w-marked.example.json'))).toBeUndefined();
  });

  it('a complete candle must end at or before asOf', () => {
    const asOf = '2026-09-20T00:00:00Z';
    expect(
      ohlcvExportProblem(exportOf('1d', asOf, [candle('2026-09-19T00:00:00Z')])),
    ).toBeUndefined();
    expect(ohlcvExportProblem(exportOf('1d', asOf, [candle('2026-09-20T00:00:00Z')]))).toBe(
      'candles[0] (2026-09-20T00:00:00Z) ends after asOf 2026-09-20T00:00:00Z',
    );
    expect(
      ohlcvExportProblem(
        exportOf('4h', '2026-09-20T10:30:00Z', [
          candle('2026-09-20T04:00:00Z'),
          candle('2026-09-20T08:00:00Z'),
        ]),
      ),
    ).toBe('candles[1] (2026-09-20T08:00:00Z) ends after asOf 2026-09-20T10:30:00Z');
  });

  it('months end on the 1st of the next month (February 2024: 29 days), weeks after 7 days', () => {
    const february = [candle('2024-02-01T00:00:00Z')];
    expect(ohlcvExportProblem(exportOf('1M', '2024-03-01T00:00:00Z', february))).toBeUndefined();
    expect(ohlcvExportProblem(exportOf('1M', '2024-02-29T23:59:59Z', february))).toMatch(
      /ends after asOf/,
    );
    const week = [candle('2026-09-07T00:00:00Z')];
    expect(ohlcvExportProblem(exportOf('1w', '2026-09-14T00:00:00Z', week))).toBeUndefined();
    expect(ohlcvExportProblem(exportOf('1w', '2026-09-13T23:00:00Z', week))).toMatch(
      /ends after asOf/,
    );
  });

  it('the incomplete candle must open before asOf', () => {
    const asOf = '2026-09-20T00:00:00Z';
    const forming = [candle('2026-09-07T00:00:00Z'), candle('2026-09-14T00:00:00Z', false)];
    expect(ohlcvExportProblem(exportOf('1w', asOf, forming))).toBeUndefined();
    expect(
      ohlcvExportProblem(
        exportOf('1w', '2026-09-14T00:00:00Z', [
          candle('2026-09-07T00:00:00Z'),
          candle('2026-09-14T00:00:00Z', false),
        ]),
      ),
    ).toBe(
      'candles[1] (2026-09-14T00:00:00Z) is incomplete but does not open before asOf 2026-09-14T00:00:00Z',
    );
  });

  it('still reports the older problems first (count, order)', () => {
    const doc = example('ohlcv_export.example.json');
    expect(ohlcvExportProblem({ ...doc, candleCount: doc.candleCount + 1 })).toMatch(
      /^candleCount/,
    );
  });
});
