import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface MemoryWorkerEnv {
  /** TDA_BACKEND=memory, PORT=0 (any free port), TDA_DATA_DIR=a fresh temporary directory. */
  env: Record<string, string>;
  dataDir: string;
  /** Removes the data directory. */
  cleanup(): Promise<void>;
}

/**
 * The env a worker service boots from in a test: in-process backends, artifacts in a throwaway
 * directory, the health server on a free port. `extra` adds the service's own variables.
 */
export async function memoryWorkerEnv(
  extra: Record<string, string> = {},
): Promise<MemoryWorkerEnv> {
  const dataDir = await mkdtemp(join(tmpdir(), 'tda-worker-'));
  return {
    env: { TDA_BACKEND: 'memory', PORT: '0', TDA_DATA_DIR: dataDir, ...extra },
    dataDir,
    cleanup: () => rm(dataDir, { recursive: true, force: true }),
  };
}
