import { describe, expect, it } from 'vitest';
import { compareRuns, latencyStats, numericLeaves } from './bench-kit';
import { parseArgs } from './main';

describe('bench kit', () => {
  it('takes nearest-rank percentiles', () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(latencyStats(values)).toEqual({ p50: 50, p90: 90, p99: 99 });
    expect(latencyStats([7])).toEqual({ p50: 7, p90: 7, p99: 7 });
    expect(latencyStats([])).toEqual({ p50: 0, p90: 0, p99: 0 });
  });

  it('compares two runs figure by figure', () => {
    const a = { machine: { cores: 2 }, firestore: [{ p50: 4 }], backend: 'x' };
    const b = { machine: { cores: 2 }, firestore: [{ p50: 6 }], only: 1 };
    expect([...numericLeaves(a)]).toEqual([
      ['machine.cores', 2],
      ['firestore.0.p50', 4],
    ]);
    const table = compareRuns(a, b);
    expect(table).toContain('| firestore.0.p50 | 4 | 6 | 1.50× |');
    expect(table).not.toContain('only');
  });

  it('parses --compare and refuses it without two files', () => {
    expect(parseArgs(['--compare', 'a.json', 'b.json'])).toMatchObject({
      compare: ['a.json', 'b.json'],
    });
    expect(() => parseArgs(['--compare', 'a.json'])).toThrow('--compare takes two result files');
    expect(parseArgs(['floors', '--smoke'])).toEqual({ parts: ['floors'], smoke: true });
  });
});
