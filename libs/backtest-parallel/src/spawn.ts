import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { STAGE_B_THREAD_ROLE, type StageBThreadData } from './thread-protocol';

/** Starts one stage-B thread with its data; the pool owns (and always terminates) it. */
export type SpawnStageBThread = (data: StageBThreadData) => Worker;

/** The workerData of every stage-B thread. */
export const STAGE_B_THREAD_DATA: StageBThreadData = { role: STAGE_B_THREAD_ROLE };

/** This library's thread entry, as TypeScript source. */
const THREAD_SOURCE = join(__dirname, 'stage-b.thread.ts');

/**
 * From source (vitest, `npm start`, the bench): a Worker evaluates a few lines of CommonJS that
 * register @swc-node/register (the TypeScript loader `npm start` uses, with the runtime tsconfig
 * for the @tda/* paths) and require the thread file, which starts serving on load.
 */
export function spawnFromSource(
  tsconfig = join(resolve(__dirname, '..', '..', '..'), 'tsconfig.runtime.json'),
): SpawnStageBThread {
  const load = createRequire(__filename);
  // Resolved here: an eval'd worker would resolve bare names from its working directory.
  const register = load.resolve('@swc-node/register');
  // Pin SWC's native binding in this thread: loaded first by a thread, it is unloaded when that
  // thread ends, and loading it again in a later thread crashes the process (seen under vitest).
  load('@swc/core');
  const code = [
    `require(${JSON.stringify(register)});`,
    `require(${JSON.stringify(THREAD_SOURCE)});`,
  ].join('\n');
  // The thread's own environment holds only what the loader reads (its runtime tsconfig): a
  // stage-B thread computes and reads no configuration.
  const env = { SWC_NODE_PROJECT: tsconfig };
  return (data) => new Worker(code, { eval: true, workerData: data, execArgv: [], env });
}

/**
 * From a single-file bundle (dist/services/<svc>/main.js): the bundle re-enters itself as the
 * thread; its main.ts calls runBacktestThreadIfWorker() first, which serves instead of starting
 * the service. `entry` defaults to this module's file, which in a bundle is the bundle.
 */
export function spawnSelf(entry = __filename): SpawnStageBThread {
  return (data) => new Worker(entry, { workerData: data });
}

/** Source when this file is TypeScript next to its thread entry, else the bundle re-entering. */
export function defaultSpawn(): SpawnStageBThread {
  return __filename.endsWith('.ts') && existsSync(THREAD_SOURCE) ? spawnFromSource() : spawnSelf();
}
