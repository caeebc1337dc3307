import type { FlowRun, TriggerRequest } from '@tda/contracts';
import type { ApiClient } from '@tda/service-cli';
import { expectEventually } from '@tda/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from './local-stack';
import { startE2eStack } from './testing/e2e-stack';

const TRIGGER: TriggerRequest = {
  flowKey: 'market_charts_v1',
  scope: { symbol: 'BTC-USDT', timeframes: ['1w'] },
};

interface QueuedReason {
  kind: string;
  position?: number;
  queueLength?: number;
}

/**
 * Queued runs end to end: the real orchestrator and workers on the emulators with
 * TDA_MAX_RUNNING_RUNS=1. Three runs: one RUNNING, two PENDING at queue positions 1 and 2; they
 * then run one after another in creation order and all succeed.
 */
describe('queued runs end to end (emulators, TDA_MAX_RUNNING_RUNS=1)', () => {
  let stack: LocalStack;
  let api: ApiClient;

  beforeAll(async () => {
    ({ stack, api } = await startE2eStack({
      name: 'queued',
      logLevel: 'warn',
      // The stack's own project (every e2e stack has one): admission counts only these runs.
      env: { TDA_MAX_RUNNING_RUNS: '1' },
    }));
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('runs three runs one after another in creation order, all SUCCEEDED', async () => {
    const triggered: FlowRun[] = [];
    for (let i = 0; i < 3; i++) {
      const { run, created } = await api.trigger({ ...TRIGGER });
      expect(created).toBe(true);
      triggered.push(run);
    }
    expect(triggered.map((r) => r.status)).toEqual(['RUNNING', 'PENDING', 'PENDING']);

    const positions = [];
    for (const run of triggered.slice(1)) {
      const answer = (await api.blockedOn(run.runId, 'ohlcv_export:1w')) as {
        reasons: QueuedReason[];
        summary: string;
      };
      positions.push(answer.reasons[0]);
      expect(answer.summary).toContain('queued (position');
    }
    expect(positions).toEqual([
      expect.objectContaining({ kind: 'queued', position: 1, queueLength: 2 }),
      expect.objectContaining({ kind: 'queued', position: 2, queueLength: 2 }),
    ]);

    let maxRunning = 0;
    const final = await expectEventually(
      async () => {
        const current = await Promise.all(triggered.map((r) => api.getRun(r.runId)));
        maxRunning = Math.max(maxRunning, current.filter((r) => r.status === 'RUNNING').length);
        expect(current.map((r) => r.status)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
        return current;
      },
      { timeoutMs: 50_000, intervalMs: 100 },
    );
    expect(maxRunning).toBe(1);
    // Each run started only after the one before it finished (the orchestrator's timestamps).
    for (let i = 1; i < final.length; i++) {
      const before = final[i - 1];
      const after = final[i];
      expect(after?.startedAt).toBeDefined();
      expect(Date.parse(after?.startedAt ?? '')).toBeGreaterThanOrEqual(
        Date.parse(before?.finishedAt ?? ''),
      );
    }
  });
});
