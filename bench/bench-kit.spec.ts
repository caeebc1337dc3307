import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareRuns, latencyStats, numericLeaves } from './bench-kit';
import { main, parseArgs } from './main';

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
    expect(parseArgs(['platform', '--smoke'])).toEqual({ parts: ['platform'], smoke: true });
  });

  it('answers a --compare file that is missing or not JSON with one line, exit 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tda-bench-compare-'));
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{');
    const lines: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((line: string) => lines.push(line) > 0) as typeof process.stderr.write;
    try {
      expect(await main(['--compare', join(dir, 'missing.json'), bad])).toBe(2);
      expect(await main(['--compare', bad, bad])).toBe(2);
    } finally {
      process.stderr.write = write;
      rmSync(dir, { recursive: true, force: true });
    }
    expect(lines).toEqual([
      `--compare: cannot read ${join(dir, 'missing.json')} (ENOENT)\n`,
      `--compare: ${bad} is not JSON (a bench/results/*.json file is)\n`,
    ]);
  });
});
