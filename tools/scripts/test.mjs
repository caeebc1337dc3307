#!/usr/bin/env node
// `npm test`: everything CI checks, in order of cost. Each stage's time is printed in a table at
// the end; the last line is the plain "N passed, N failed" summary of the test runner.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const stages = [
  ['format', 'prettier', ['--check', '.', '--log-level', 'warn']],
  // @nx/enforce-module-boundaries silently skips itself without a cached project graph
  // (a fresh clone), so compute the graph first.
  ['project-graph', 'nx', ['show', 'projects']],
  ['lint', 'eslint', ['.', '--max-warnings', '0']],
  ['typecheck', 'tsc', ['-p', 'tsconfig.json', '--noEmit']],
  [
    'tests',
    'vitest',
    ['run', '--reporter=default', '--reporter=json', '--outputFile.json=tmp/vitest-report.json'],
  ],
];

// The tests' temp dirs (data dirs of the stacks they start, rendered files, browser profiles)
// go under one scratch dir per run, removed when the run passes: left behind, they added up to
// gigabytes in /tmp over a few dozen runs. A failed run keeps it for the logs.
// Caches stay where they were: swc-node's transform cache (what every spawned TypeScript process
// compiles through) is worth keeping between runs.
const scratch = mkdtempSync(join(tmpdir(), 'tda-test-'));
const swcCache = join(tmpdir(), `swc-node-${process.getuid?.() ?? 'default'}`);
const stageEnv = {
  ...process.env,
  SWC_NODE_CACHE_DIR: process.env.SWC_NODE_CACHE_DIR ?? swcCache,
  TMPDIR: scratch,
};

const only = process.argv.slice(2);
const results = [];
mkdirSync('tmp', { recursive: true });
rmSync('tmp/vitest-report.json', { force: true });
let failed = false;
for (const [name, bin, args] of stages) {
  if (
    only.length > 0 &&
    !only.includes(name) &&
    !(name === 'project-graph' && only.includes('lint'))
  )
    continue;
  process.stdout.write(`\n=== ${name}: ${bin} ${args.join(' ')}\n`);
  const started = Date.now();
  const run = spawnSync(`node_modules/.bin/${bin}`, args, { stdio: 'inherit', env: stageEnv });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const ok = run.status === 0;
  results.push({ name, ok, seconds });
  if (!ok) {
    failed = true;
    break;
  }
}

process.stdout.write('\n| stage | result | seconds |\n|---|---|---|\n');
for (const r of results)
  process.stdout.write(`| ${r.name} | ${r.ok ? 'ok' : 'FAILED'} | ${r.seconds} |\n`);
if (existsSync('tmp/vitest-report.json')) {
  const report = JSON.parse(readFileSync('tmp/vitest-report.json', 'utf8'));
  process.stdout.write(
    `\ntests: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${report.numPendingTests} skipped\n`,
  );
}
if (failed) process.stdout.write(`temp files of this run kept in ${scratch}\n`);
else rmSync(scratch, { recursive: true, force: true, maxRetries: 3 });
process.exit(failed ? 1 : 0);
