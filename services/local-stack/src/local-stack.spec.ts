import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryLogger } from '@tda/observability';
import { afterAll, describe, expect, it } from 'vitest';
import { startLocalStack } from './local-stack';

const dataDir = mkdtempSync(join(tmpdir(), 'tda-local-stack-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('startLocalStack step policy overrides', () => {
  it('applies the TDA_STEP_* checks to the in-process workers like their own boot does', async () => {
    const log = createMemoryLogger();
    // A heartbeat as long as the lease would let every lease lapse between heartbeats.
    await expect(
      startLocalStack({
        env: {
          TDA_BACKEND: 'memory',
          PORT: '0',
          TDA_DATA_DIR: dataDir,
          TDA_STEP_LEASE_SECONDS: '10',
          TDA_STEP_HEARTBEAT_SECONDS: '10',
        },
        loggerFor: () => log.logger,
      }),
    ).rejects.toThrow(/TDA_STEP_HEARTBEAT_SECONDS \/ TDA_STEP_LEASE_SECONDS/);
  });

  it('checks a test hook policy over the service policy the same way', async () => {
    const log = createMemoryLogger();
    await expect(
      startLocalStack({
        env: { TDA_BACKEND: 'memory', PORT: '0', TDA_DATA_DIR: dataDir },
        loggerFor: () => log.logger,
        hooks: { workerPolicy: { leaseMs: 2_000, heartbeatMs: 2_000 } },
      }),
    ).rejects.toThrow(/TDA_STEP_HEARTBEAT_SECONDS \/ TDA_STEP_LEASE_SECONDS/);
  });
});
