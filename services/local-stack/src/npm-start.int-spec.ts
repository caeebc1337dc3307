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
  it('runs the flow-4 demo to SUCCEEDED: PNG charts, valid reports, the paper account and the recommendation last', async () => {
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
    // The console and how to sign in to it (a fresh admin token of the default owner).
    expect(output).toMatch(/^ {2}console {3}http:\/\/127\.0\.0\.1:\d+\/ {3}\(open it and sign in/m);
    expect(output).toMatch(/^ {2}sign in {3}tda_[A-Za-z0-9_-]{43} {3}\(admin of owner local-user/m);
    const pngPaths = [...output.matchAll(/^\s+(\/\S+\.png)$/gm)].map((m) => m[1] ?? '');
    expect(pngPaths.length).toBeGreaterThanOrEqual(2);
    for (const path of pngPaths) {
      expect(existsSync(path)).toBe(true);
      expect(decodePng(readFileSync(path)).width).toBeGreaterThan(200);
    }
    // The reports block: each report of flow 4 (1w, 1d, 4h) as gs:// URI and local file.
    const runId = /^demo run (\S+) /m.exec(output)?.[1] ?? '';
    expect(runId).toMatch(RUN_ID_PATTERN);
    expect(output).toContain(
      `(recommendation_with_account_v1, BTC-USDT, as of 2026-09-20T00:00:00Z)`,
    );
    expect(output).toContain("paper account 'demo' created");
    const reportsStart = output.indexOf('\nreports (llm_report_file');
    const recoStart = output.indexOf('\nrecommendation (llm_reco:');
    expect(reportsStart).toBeGreaterThan(0);
    expect(recoStart).toBeGreaterThan(reportsStart);
    const reportsBlock = output.slice(reportsStart, recoStart);
    expect(reportsBlock).toContain(`npx tda report ${runId}`);
    const reportUris = [...reportsBlock.matchAll(/^\s+(gs:\/\/\S+\.json)$/gm)].map((m) => m[1]);
    const reportPaths = [...reportsBlock.matchAll(/^\s+(\/\S+\.json)$/gm)].map((m) => m[1] ?? '');
    const timeframes = ['1d', '1w', '4h'] as const;
    expect(reportUris).toEqual(
      timeframes.map(
        (tf) =>
          `gs://tda-artifacts/runs/${runId}/${tf}/llm_report:${tf}:prompt_multi_tf_v1:model_gemini_2_5_flash.json`,
      ),
    );
    expect(reportPaths).toEqual(
      reportUris.map((uri) => join(dataDir, (uri ?? '').slice('gs://'.length))),
    );
    for (const [index, path] of reportPaths.entries()) {
      const report = validate.llmReportFile(JSON.parse(readFileSync(path, 'utf8')));
      expect(report.ok ? [] : report.issues).toEqual([]);
      expect(report.ok && report.value.metadata).toMatchObject({
        runId,
        symbol: 'BTC-USDT',
        timeframe: timeframes[index],
        asOf: '2026-09-20T00:00:00Z',
        provider: 'offline',
      });
    }
    // The recommendation is what the terminal ends with (before the finish line).
    const recoBlock = output.slice(recoStart, output.indexOf('\ndemo run finished'));
    expect(recoBlock).toMatch(/\n(BUY|SELL|HOLD|REDUCE) BTC-USDT {2}strength [01]\.\d\d {2}— /);
    expect(recoBlock).toContain('as of       2026-09-20T00:00:00Z (last close ');
    expect(recoBlock).toContain('by          offline recommender (deterministic, no model)');
    expect(recoBlock).toContain('account     demo');
    expect(recoBlock.match(/^ {2}rpt_[a-z0-9]{24} {2}(1w|1d|4h) /gm)).toHaveLength(3);
    expect(existsSync(join(dataDir, 'local-api.json'))).toBe(true);
    expect(readFileSync(join(dataDir, 'logs', 'local-stack.log'), 'utf8')).toContain(
      '"event":"step_succeeded"',
    );
  }, 120_000);
});
