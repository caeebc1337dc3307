import { validate, type FlowRun } from '@tda/contracts';
import { BrokerPublisher } from '@tda/messaging';
import type { MemoryLogger } from '@tda/observability';
import { ApiError, type ApiClient } from '@tda/service-cli';
import { expectEventually } from '@tda/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runArtifacts } from './demo';
import type { LocalStack } from './local-stack';
import { claimsOf, startE2eStack } from './testing/e2e-stack';
import { decodePng } from './testing/png';

/**
 * End to end on the real emulators with the real services (orchestrator, OHLCV and chart
 * workers), composed exactly as `npm start` does and driven through the HTTP API.
 */
describe('step loop end to end (emulators)', () => {
  let stack: LocalStack;
  let api: ApiClient;
  let logs: MemoryLogger;
  let prefix: string;

  beforeAll(async () => {
    ({ stack, api, logs, prefix } = await startE2eStack({ name: 'e2e' }));
  });

  afterAll(async () => {
    await stack?.close();
  });

  const claimCounts = (runId: string): number[] => Object.values(claimsOf(logs, runId));

  it('runs market_charts_v1 PENDING -> RUNNING -> SUCCEEDED with valid artifacts and decodable PNGs', async () => {
    const { run, created } = await api.trigger({
      flowKey: 'market_charts_v1',
      scope: { symbol: 'BTC-USDT' },
    });
    expect(created).toBe(true);
    expect(['PENDING', 'RUNNING']).toContain(run.status);
    const seen = new Set<string>([run.status]);
    const final = await expectEventually(
      async () => {
        const current = await api.getRun(run.runId);
        seen.add(current.status);
        expect(current.status).toBe('SUCCEEDED');
        return current;
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    expect(seen.has('RUNNING')).toBe(true);
    expect(validate.flowRun(final).ok).toBe(true);
    expect(final.progress).toMatchObject({ total: 4, succeeded: 4 });

    const files = await runArtifacts(final, stack.backends.artifacts);
    const pngs = files.filter((f) => f.kind.startsWith('PNG'));
    expect(pngs.length).toBeGreaterThanOrEqual(2);
    for (const file of files) {
      const bytes = await stack.backends.artifacts.read(file.uri);
      if (file.kind === 'OHLCV_EXPORT') {
        const ohlcv = validate.ohlcvExport(JSON.parse(bytes.toString('utf8')));
        expect(ohlcv.ok ? [] : ohlcv.issues).toEqual([]);
      } else if (file.kind === 'charts manifest') {
        const manifest = validate.chartsManifest(JSON.parse(bytes.toString('utf8')));
        expect(manifest.ok ? [] : manifest.issues).toEqual([]);
      } else {
        const png = decodePng(bytes);
        expect(png.width).toBeGreaterThan(200);
        expect(png.height).toBeGreaterThan(200);
      }
    }
    // Each step executed exactly once.
    expect(claimCounts(run.runId)).toEqual([1, 1, 1, 1]);
  });

  it('does not duplicate work for duplicated step-ready messages', async () => {
    const publisher = new BrokerPublisher({ publisher: stack.backends.broker, prefix });
    const { run } = await api.trigger({
      flowKey: 'market_charts_v1',
      scope: { symbol: 'ETH-USDT' },
    });
    // Duplicate every READY step's message right away (racing the orchestrator's own copy).
    const duplicate = async (current: FlowRun): Promise<void> => {
      for (const [stepId, step] of Object.entries(current.steps)) {
        if (step.status !== 'READY') continue;
        for (let i = 0; i < 3; i++) {
          await publisher.publishStepReady({
            runId: current.runId,
            stepId,
            stepType: step.stepType,
            attempt: step.attempt,
            dispatchedAt: new Date().toISOString(),
            reason: 'replay',
          });
        }
      }
    };
    await duplicate(await api.getRun(run.runId));
    const final = await expectEventually(
      async () => {
        const current = await api.getRun(run.runId);
        await duplicate(current);
        expect(current.status).toBe('SUCCEEDED');
        return current;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    const before = await stack.backends.store.get(run.runId);
    // Replay every step after the run finished: all no-ops, no writes.
    for (const [stepId, step] of Object.entries(final.steps)) {
      await publisher.publishStepReady({
        runId: run.runId,
        stepId,
        stepType: step.stepType,
        attempt: step.attempt,
        dispatchedAt: new Date().toISOString(),
        reason: 'replay',
      });
    }
    await expectEventually(
      () => {
        const noops = logs
          .withEvent('message_acked')
          .filter((r) => r['runId'] === run.runId && r['outcome'] === 'noop');
        expect(noops.length).toBeGreaterThanOrEqual(4);
      },
      { timeoutMs: 30_000 },
    );
    const after = await stack.backends.store.get(run.runId);
    expect(after?.version).toBe(before?.version);
    expect(claimCounts(run.runId)).toEqual([1, 1, 1, 1]);
  });

  it('cancels a run in the middle: pending steps never start and the run stays CANCELLED', async () => {
    const { run } = await api.trigger({
      flowKey: 'market_charts_v1',
      scope: { symbol: 'ETH-USDT' },
    });
    const cancelled = await api.cancel(run.runId);
    expect(cancelled.status).toBe('CANCELLED');
    // Idempotent.
    expect((await api.cancel(run.runId)).status).toBe('CANCELLED');
    // Let in-flight OHLCV steps settle, then check nothing downstream ran.
    const final = await expectEventually(
      async () => {
        const current = await api.getRun(run.runId);
        const running = Object.values(current.steps).filter((s) =>
          ['READY', 'RUNNING'].includes(s.status),
        );
        expect(running).toEqual([]);
        return current;
      },
      { timeoutMs: 30_000 },
    );
    expect(final.status).toBe('CANCELLED');
    const cancelAt = Date.parse(cancelled.cancelRequestedAt ?? '');
    expect(Number.isNaN(cancelAt)).toBe(false);
    // Nothing starts after the cancel: every step that did not end CANCELLED was claimed before
    // it (on a loaded machine the OHLCV steps, or even a chart step, may already be running when
    // the cancel lands; those finish and the run stays CANCELLED).
    for (const step of Object.values(final.steps)) {
      if (step.status === 'CANCELLED') continue;
      const startedAt = Date.parse(step.outputs.execution?.timing?.startedAt ?? '');
      expect(startedAt).toBeLessThanOrEqual(cancelAt);
    }
    expect(Object.values(final.steps).some((s) => s.status === 'CANCELLED')).toBe(true);
    // Absorbing: a later advance (a step event, the reconciler) never reopens it.
    expect((await api.getRun(run.runId)).status).toBe('CANCELLED');
  });

  it('answers a bad trigger with a 4xx and creates nothing', async () => {
    const before = await api.listRuns({ limit: 100 });
    const attempts: unknown[] = [
      { flowKey: 'no_such_flow_v1', scope: { symbol: 'BTC-USDT' } },
      { flowKey: 'market_charts_v1', scope: { symbol: 'BTC-USDT', timeframes: ['7m'] } },
      { flowKey: 'market_charts_v1' },
    ];
    for (const body of attempts) {
      const error = await api.trigger(body as never).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ApiError);
      const apiError = error as ApiError;
      expect(apiError.status).toBeGreaterThanOrEqual(400);
      expect(apiError.status).toBeLessThan(500);
      expect(apiError.code).toBe('INVALID_REQUEST');
      expect(apiError.message.length).toBeGreaterThan(0);
    }
    const after = await api.listRuns({ limit: 100 });
    expect(after.runs.map((r) => r.runId)).toEqual(before.runs.map((r) => r.runId));
  });
});
