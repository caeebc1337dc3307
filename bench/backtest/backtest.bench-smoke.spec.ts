import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main, parseArgs } from '../main';
import { runBacktestBench, type BacktestBenchRow } from './backtest.bench';

const COLUMNS = [
  'variants',
  'bars',
  'engine variants/s',
  'engine variant-bars/s/core',
  'reference variant-bars/s',
  'engine / reference',
  'reference loop only',
  'engine / loop only',
  '2 threads variant-bars/s',
  '2-thread speedup',
  'thread start',
];

/** The cells of the Markdown table rows (header, separator, body). */
function tableRows(markdown: string): string[][] {
  return markdown
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .map((line) =>
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
    );
}

describe('bench backtest (smoke: wiring only, no speed assertion)', () => {
  it('prints the machine and one table row per grid with every column', async () => {
    const { part, markdown, data } = await runBacktestBench({ smoke: true });
    expect(part).toBe('backtest');
    expect(markdown).toMatch(
      /Machine: .+, \d+ cores, Node v\d+.*, load [\d.]+, CPU speed [1-9]\d*k JSON round trips\/s/,
    );
    const [header, separator, ...body] = tableRows(markdown);
    expect(header).toEqual(COLUMNS);
    expect(separator).toHaveLength(COLUMNS.length);
    expect(body.map((cells) => cells[0])).toEqual(['32', '96']);
    for (const cells of body) expect(cells).toHaveLength(COLUMNS.length);
    const rows = (data as { rows: BacktestBenchRow[] }).rows;
    for (const r of rows) {
      expect(r.bars).toBe(300);
      expect(r.engineVariantBarsPerSecPerCore).toBeGreaterThan(0);
      expect(r.referenceVariants).toBeGreaterThan(0);
      expect(r.twoThreadsSpeedup).toBeGreaterThan(0);
    }
  });

  it('main runs a named part and writes its JSON; unknown parts are refused', async () => {
    expect(parseArgs([])).toEqual({
      parts: ['platform', 'platform-memory', 'services', 'backtest'],
      smoke: false,
    });
    expect(parseArgs(['backtest', '--smoke'])).toEqual({ parts: ['backtest'], smoke: true });
    expect(() => parseArgs(['nope'])).toThrow(/unknown bench part/);
    const dir = mkdtempSync(join(tmpdir(), 'tda-bench-'));
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = (() => true) as typeof process.stdout.write;
    try {
      expect(await main(['backtest', '--smoke'], dir)).toBe(0);
    } finally {
      process.stdout.write = write;
    }
    const [file] = readdirSync(dir);
    expect(file).toMatch(/^backtest-.+\.json$/);
    const json = JSON.parse(readFileSync(join(dir, file as string), 'utf8')) as { smoke: boolean };
    expect(json.smoke).toBe(true);
    rmSync(dir, { recursive: true, force: true });
  });
});
