import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { processEnv } from '@tda/config';
import { describe, expect, it } from 'vitest';
import { decodePng } from './testing/png';

const root = resolve(__dirname, '../../..');

/**
 * What a user gets from `npm start`: the launcher binary (SWC at run time, no build step) starts
 * the stack, runs the demo to completion and prints where the artifacts are. Memory backend here
 * (the emulator path is covered by the e2e suite); TDA_EXIT_AFTER_DEMO ends the process.
 */
describe('npm start', () => {
  it('runs the demo to SUCCEEDED and leaves real PNG charts on disk', async () => {
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
    expect(existsSync(join(dataDir, 'local-api.json'))).toBe(true);
    expect(readFileSync(join(dataDir, 'logs', 'local-stack.log'), 'utf8')).toContain(
      '"event":"step_succeeded"',
    );
  }, 120_000);
});
