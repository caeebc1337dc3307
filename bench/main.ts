import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runBacktestBench } from './backtest/backtest.bench';
import { compareRuns, type BenchPart, type BenchPartOptions } from './bench-kit';
import { runPlatformBench, runPlatformMemoryBench } from './platform/platform.bench';
import { runServicesBench } from './services/services.bench';

/** Every part, in run order (issue 16 adds more). */
export const PARTS: Record<string, (options: BenchPartOptions) => Promise<BenchPart>> = {
  platform: runPlatformBench,
  'platform-memory': runPlatformMemoryBench,
  services: runServicesBench,
  backtest: runBacktestBench,
};

export interface BenchArgs {
  parts: string[];
  smoke: boolean;
  /** `--compare a.json b.json`: print the two runs side by side instead of measuring. */
  compare?: [string, string];
}

/** `[part...] [--smoke]`; no part = all of them. */
export function parseArgs(argv: string[]): BenchArgs {
  const at = argv.indexOf('--compare');
  if (at >= 0) {
    const [a, b] = argv.slice(at + 1, at + 3);
    if (a === undefined || b === undefined || argv.length !== at + 3) {
      throw new Error('--compare takes two result files: --compare a.json b.json');
    }
    return { parts: [], smoke: false, compare: [a, b] };
  }
  const smoke = argv.includes('--smoke');
  const named = argv.filter((a) => !a.startsWith('--'));
  const unknown = named.filter((p) => !(p in PARTS));
  if (unknown.length > 0) {
    throw new Error(
      `unknown bench part(s): ${unknown.join(', ')} (known: ${Object.keys(PARTS).join(', ')})`,
    );
  }
  return { parts: named.length > 0 ? named : Object.keys(PARTS), smoke };
}

/** A result file of an earlier run, or why it cannot be read (no stack trace for a typo). */
function readResult(file: string): { data: unknown } | { error: string } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    return { error: `--compare: cannot read ${file} (${code})` };
  }
  try {
    return { data: JSON.parse(text) as unknown };
  } catch {
    return { error: `--compare: ${file} is not JSON (a bench/results/*.json file is)` };
  }
}

/** Runs the parts, prints each Markdown report, writes bench/results/<part>-<timestamp>.json. */
export async function main(
  argv: string[],
  resultsDir = join(__dirname, 'results'),
): Promise<number> {
  let args: BenchArgs;
  try {
    args = parseArgs(argv);
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
  if (args.compare !== undefined) {
    const runs = args.compare.map(readResult);
    const failed = runs.find((run) => 'error' in run);
    if (failed !== undefined && 'error' in failed) {
      process.stderr.write(`${failed.error}\n`);
      return 2;
    }
    const [a, b] = runs.map((run) => ('data' in run ? run.data : undefined));
    process.stdout.write(`${compareRuns(a, b)}\n`);
    return 0;
  }
  mkdirSync(resultsDir, { recursive: true });
  for (const name of args.parts) {
    const run = PARTS[name] as (options: BenchPartOptions) => Promise<BenchPart>;
    const result = await run({ smoke: args.smoke });
    process.stdout.write(`${result.markdown}\n\n`);
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const file = join(resultsDir, `${name}-${stamp}.json`);
    writeFileSync(file, `${JSON.stringify(result.data, null, 2)}\n`);
    process.stdout.write(`(written ${file})\n\n`);
  }
  return 0;
}
