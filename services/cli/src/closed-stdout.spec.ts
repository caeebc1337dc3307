import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exitQuietlyWhenStdoutCloses } from './closed-stdout';

const TDA_BIN = resolve(__dirname, '../bin/tda.js');

function epipe(): NodeJS.ErrnoException {
  return Object.assign(new Error('write EPIPE'), { code: 'EPIPE', syscall: 'write' });
}

describe('exitQuietlyWhenStdoutCloses', () => {
  it('exits 0 when the reader went away (EPIPE) and rethrows any other stdout error', () => {
    const stdout = new EventEmitter();
    const exits: number[] = [];
    exitQuietlyWhenStdoutCloses(stdout, (code) => exits.push(code));
    stdout.emit('error', epipe());
    expect(exits).toEqual([0]);
    const other = Object.assign(new Error('write EIO'), { code: 'EIO' });
    expect(() => stdout.emit('error', other)).toThrow('write EIO');
    expect(exits).toEqual([0]);
  });

  it('`tda --help | head -0`: the real CLI exits 0 without a stack trace', async () => {
    const child = spawn(process.execPath, [TDA_BIN, '--help'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The reader closes before the CLI (still loading) writes anything, like `| head -0`.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((done) => child.on('close', done));
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  });
});
