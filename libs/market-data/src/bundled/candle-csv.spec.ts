import { describe, expect, it } from 'vitest';
import { CandleCsvError, parseCandleCsv } from './candle-csv';

describe('parseCandleCsv', () => {
  it('reads the Binance layout (UTC datetime without zone)', () => {
    const text = 'datetime,open,high,low,close,volume\n2026-02-24 04:00:00,1,2,0.5,1.5,10.25\n';
    expect(parseCandleCsv(text, 'x.csv')).toEqual([
      {
        openTime: Date.parse('2026-02-24T04:00:00Z'),
        open: 1,
        high: 2,
        low: 0.5,
        close: 1.5,
        volume: 10.25,
      },
    ]);
  });

  it('reads the Yahoo layout (date = UTC day, Adj Close ignored, no trailing newline)', () => {
    const text =
      'Date,Open,High,Low,Close,Adj Close,Volume\r\n2014-09-17,465.864014,468.174011,452.421997,457.334015,999,21056800';
    expect(parseCandleCsv(text, 'y.csv')).toEqual([
      {
        openTime: Date.parse('2014-09-17T00:00:00Z'),
        open: 465.864014,
        high: 468.174011,
        low: 452.421997,
        close: 457.334015,
        volume: 21056800,
      },
    ]);
  });

  it('names the file and line of a malformed row', () => {
    const header = 'Date,Open,High,Low,Close,Adj Close,Volume\n';
    expect(() => parseCandleCsv(`${header}2014-09-17,1,2,0.5,null,1,5`, 'y.csv')).toThrow(
      new CandleCsvError('y.csv', 2, "bad close 'null'"),
    );
    expect(() => parseCandleCsv(`${header}17/09/2014,1,2,0.5,1,1,5`, 'y.csv')).toThrow(
      "y.csv:2: bad time '17/09/2014'",
    );
    expect(() => parseCandleCsv('time,open\n', 'z.csv')).toThrow("z.csv:1: missing column 'date'");
  });
});
