import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { processEnv } from '@tda/config';
import { RUN_ID_PATTERN, validate } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import { decodePng } from './testing/png';

const root = resolve(__dirname, '../../..');

/**
 * What a user gets from `npm start`: the launcher binary (SWC at run time, no build step) starts
 * the stack, runs the demo to completion and prints where the artifacts are. Memory backend here
 * (the emulator path is covered by the e2e suite); TDA_EXIT_AFTER_DEMO ends the process.
 */
describe('npm start', () => {
  it('runs the flow-1 demo to SUCCEEDED and prints where its PNG charts and valid reports are', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tda-start-'));
    const child = spawn(process.execPath, [join(root, 'services/local-stack/bin/start.js')], {
      cwd: root,
      env: {
        PATH: processEnv()['PATH'] ?? '',
        HOME: processEnv()['HOME'] ?? '',
        TDA_BACKEND: 'memory',
        TDA_DATA_DIR: dataDir,
        PORT: '0',
        TDA_EXIT_AFTER_DEMO: 'true',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((done) => child.on('exit', (c) => done(c)));
    expect(output).toContain('demo run finished: SUCCEEDED');
    expect(code).toBe(0);
    const pngPaths = [...output.matchAll(/^\s+(\/\S+\.png)$/gm)].map((m) => m[1] ?? '');
    expect(pngPaths.length).toBeGreaterThanOrEqual(2);
    for (const path of pngPaths) {
      expect(existsSync(path)).toBe(true);
      expect(decodePng(readFileSync(path)).width).toBeGreaterThan(200);
    }
    // The reports block: each flow-1 report as gs:// URI and local file, plus the CLI hint.
    const runId = /^demo run (\S+) /m.exec(output)?.[1] ?? '';
    expect(runId).toMatch(RUN_ID_PATTERN);
    const reportsBlock = output.slice(output.indexOf('\nreports (llm_report_file'));
    expect(reportsBlock.length).toBeLessThan(output.length);
    expect(reportsBlock).toContain(`npx tda report ${runId}`);
    const reportUris = [...reportsBlock.matchAll(/^\s+(gs:\/\/\S+\.json)$/gm)].map((m) => m[1]);
    const reportPaths = [...reportsBlock.matchAll(/^\s+(\/\S+\.json)$/gm)].map((m) => m[1] ?? '');
    expect(reportUris).toEqual([
      `gs://tda-artifacts/runs/${runId}/1M/llm_report:1M:prompt_month_v1:model_gemini_2_5_flash.json`,
      `gs://tda-artifacts/runs/${runId}/1w/llm_report:1w:prompt_week_v1:model_gemini_2_5_flash.json`,
    ]);
    expect(reportPaths).toEqual(
      reportUris.map((uri) => join(dataDir, (uri ?? '').slice('gs://'.length))),
    );
    for (const [index, path] of reportPaths.entries()) {
      expect(existsSync(path)).toBe(true);
      const report = validate.llmReportFile(JSON.parse(readFileSync(path, 'utf8')));
      expect(report.ok ? [] : report.issues).toEqual([]);
      expect(report.ok && report.value.metadata).toMatchObject({
        runId,
        symbol: 'BTC-USDT',
        timeframe: index === 0 ? '1M' : '1w',
        provider: 'offline',
      });
    }
    expect(existsSync(join(dataDir, 'local-api.json'))).toBe(true);
    expect(readFileSync(join(dataDir, 'logs', 'local-stack.log'), 'utf8')).toContain(
      '"event":"step_succeeded"',
    );
  }, 120_000);
});
