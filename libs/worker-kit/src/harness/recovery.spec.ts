import { sha256Hex } from '@tda/artifacts';
import type { FlowRun } from '@tda/contracts';
import { makeFlowRun, makeStep } from '@tda/flow-store/testing';
import { describe, expect, it } from 'vitest';
import { StepInputError } from '../step-errors';
import { jsonResult, TestStepHandler } from '../testing';
import { expectNoSideEffects, first, harnessFixtures, OHLCV } from '../testing/harness-fixture';

const fixture = harnessFixtures();

describe('StepHarness — recovery (seed 002 split-brain)', () => {
  /** A run whose step is RUNNING under `owner`'s lease, as a crashed attempt left it. */
  function runningRun(owner: string, expiresAt: string): FlowRun {
    return makeFlowRun({
      steps: {
        [OHLCV]: makeStep({
          status: 'RUNNING',
          attempt: 1,
          lease: { owner, expiresAt },
          outputs: { execution: { timing: { startedAt: '2026-01-15T10:00:01.000Z' } } },
        }),
      },
    });
  }
  const EXPIRED = '2026-01-15T10:00:09.000Z';
  const VALID = '2026-01-15T10:01:00.000Z';
  /** The step's own artifact, as a crashed attempt of it wrote it. */
  const ARTIFACT = Buffer.from(
    JSON.stringify({ runId: makeFlowRun().runId, stepId: OHLCV, rows: [1, 2, 3] }),
  );

  async function withArtifact(run: FlowRun, handler?: TestStepHandler, bytes = ARTIFACT) {
    const f = await fixture({ run, ...(handler === undefined ? {} : { handler }) });
    await f.artifacts.inner.put(f.primaryUri(OHLCV), bytes, { contentType: 'application/json' });
    return f;
  }

  it.each([
    ['its lease expired', 'worker-dead', EXPIRED],
    ['it is our own orphan', 'worker-a', VALID],
  ])(
    'RUNNING, %s, artifact present → finalized from the artifact, not executed',
    async (_n, owner, expiresAt) => {
      const f = await withArtifact(runningRun(owner, expiresAt));
      const outcome = await f.harness.handleStepReady(f.message(OHLCV), { deliveryAttempt: 2 });

      expect(outcome).toMatchObject({ kind: 'recovered', status: 'SUCCEEDED', attempt: 1 });
      expect(f.handler.executions).toBe(0);
      expect(f.store.writes).toBe(1);
      expect(f.artifacts.puts).toBe(0);
      const step = await f.step(OHLCV);
      expect(step.status).toBe('SUCCEEDED');
      expect(step.lease).toBeUndefined();
      expect(step.attempt).toBe(1);
      expect(step.outputs.gcs_uri).toBe(f.primaryUri(OHLCV));
      expect(step.outputs.execution).toMatchObject({
        recoveredFromArtifact: true,
        worker: 'worker-a',
        artifact: {
          gcs_uri: f.primaryUri(OHLCV),
          sha256: sha256Hex(ARTIFACT),
          bytes: ARTIFACT.length,
        },
        timing: { startedAt: '2026-01-15T10:00:01.000Z', durationMs: 9_000 },
      });
      expect(f.stepEvents()).toEqual([
        expect.objectContaining({ status: 'SUCCEEDED', attempt: 1 }),
      ]);
      expect(f.log.withEvent('step_recovered')[0]).toMatchObject({ recoveredFromArtifact: true });
    },
  );

  it('READY again (reclaimed after a crash) with the artifact present → claimed, then finalized from it', async () => {
    const run = makeFlowRun({
      steps: {
        [OHLCV]: makeStep({
          status: 'READY',
          attempt: 1,
          error: {
            code: 'LEASE_EXPIRED',
            message: 'step lost its worker; reclaimable',
            retryable: true,
          },
        }),
      },
    });
    const f = await withArtifact(run);
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(outcome).toMatchObject({ kind: 'recovered', status: 'SUCCEEDED', attempt: 2 });
    expect(f.handler.executions).toBe(0);
    expect(f.store.statusWrites(OHLCV)).toEqual(['RUNNING', 'SUCCEEDED']);
    expect(f.artifacts.puts).toBe(0);
    const step = await f.step(OHLCV);
    expect(step.error).toBeUndefined();
    expect(step.outputs.execution).toMatchObject({
      recoveredFromArtifact: true,
      artifact: { sha256: sha256Hex(ARTIFACT) },
    });
  });

  it('uses handler.recover when present (its outputs), still without executing', async () => {
    const handler = new TestStepHandler().withRecover(async (existing) => ({
      artifacts: [],
      primaryUri: existing.uri,
      outputs: {
        rowCount: Array.isArray(existing.artifact['rows']) ? existing.artifact['rows'].length : 0,
      },
    }));
    const f = await withArtifact(runningRun('worker-dead', EXPIRED), handler);
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(outcome).toMatchObject({ kind: 'recovered', status: 'SUCCEEDED' });
    expect(handler.recoveries).toBe(1);
    expect(handler.executions).toBe(0);
    const step = await f.step(OHLCV);
    expect(step.outputs['rowCount']).toBe(3);
    expect(step.outputs.execution?.recoveredFromArtifact).toBe(true);
  });

  it.each([
    ['not JSON', Buffer.from('not json')],
    ['not the step type’s artifact', Buffer.from('{"rows":[1,2,3]}')],
    [
      'another run’s artifact',
      Buffer.from(JSON.stringify({ runId: '20260115-100000_BTC-USDT_other', stepId: OHLCV })),
    ],
  ])(
    'an existing primary that is %s is not vouched for: executed again, the different bytes a conflict',
    async (_name, bytes) => {
      const handler = new TestStepHandler().withRecover(async () => {
        throw new Error('recover must not be asked about an artifact that is not the step’s');
      });
      const f = await withArtifact(runningRun('worker-dead', EXPIRED), handler, bytes);
      const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);
      expect(handler.recoveries).toBe(0);
      expect(handler.executions).toBe(1);
      expect(outcome).toMatchObject({
        kind: 'failed',
        status: 'FAILED',
        errorCode: 'GCS_WRITE_FAILED',
      });
      expect((await f.step(OHLCV)).error).toMatchObject({
        details: { reason: 'artifact_conflict' },
      });
    },
  );

  it('handler.recover returning null → takes over and executes (attempt + 1)', async () => {
    const handler = new TestStepHandler().withRecover(async () => null);
    handler.executeImpl = async (ctx) => ({
      artifacts: [],
      primaryUri: ctx.artifactUri(),
    });
    const f = await withArtifact(runningRun('worker-dead', EXPIRED), handler);
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(outcome).toMatchObject({ kind: 'executed', status: 'SUCCEEDED', attempt: 2 });
    expect(handler.executions).toBe(1);
  });

  it('handler.recover refusing with a decided error → executes instead, no nack loop', async () => {
    const handler = new TestStepHandler().withRecover(async () => {
      throw new StepInputError('inputs now ask for more than the artifact has');
    });
    handler.executeImpl = async (ctx) => ({ artifacts: [], primaryUri: ctx.artifactUri() });
    const f = await withArtifact(runningRun('worker-dead', EXPIRED), handler);
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(outcome).toMatchObject({ kind: 'executed', status: 'SUCCEEDED', attempt: 2 });
    expect(f.log.withEvent('step_recovery_refused')[0]).toMatchObject({
      reason: 'handler_refused',
      errorCode: 'INVALID_STEP_INPUTS',
    });
  });

  it('handler.recover failing transiently → nack, until the redelivery bound, then executes', async () => {
    const handler = new TestStepHandler().withRecover(async () => {
      throw new Error('artifact store briefly unavailable');
    });
    handler.executeImpl = async (ctx) => ({ artifacts: [], primaryUri: ctx.artifactUri() });
    const f = await withArtifact(runningRun('worker-dead', EXPIRED), handler);
    await expect(f.harness.handleStepReady(f.message(OHLCV), first)).rejects.toThrow(
      'briefly unavailable',
    );
    expect(handler.executions).toBe(0);
    const atBound = { deliveryAttempt: f.harness.policy.maxDeliveryAttempts };
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), atBound);
    expect(outcome).toMatchObject({ kind: 'executed', status: 'SUCCEEDED' });
    expect(f.log.withEvent('step_recovery_refused')[0]).toMatchObject({
      reason: 'delivery_attempts_exhausted',
      errorCode: 'INTERNAL_ERROR',
    });
  });

  it('RUNNING under a live lease of another worker → noop already_running, nothing touched', async () => {
    const f = await withArtifact(runningRun('worker-b', VALID));
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(outcome).toEqual({ action: 'ack', kind: 'noop', reason: 'already_running' });
    expect(f.artifacts.existsChecks).toBe(0);
    expectNoSideEffects(f);
  });

  it('RUNNING with an expired lease and no artifact → left to the reconciler, no writes', async () => {
    const f = await fixture({ run: runningRun('worker-dead', EXPIRED) });
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(outcome).toMatchObject({ kind: 'noop', reason: 'lease_expired' });
    expectNoSideEffects(f);
  });

  it('output written but the finalize write failed → the redelivery finalizes without re-executing', async () => {
    const handler = new TestStepHandler();
    const f = await fixture({ handler });
    handler.executeImpl = async (ctx) => {
      // The store goes down after the claim, for the whole finalize budget.
      f.store.failNextUpdates(3);
      return jsonResult(ctx);
    };
    await expect(f.harness.handleStepReady(f.message(OHLCV), first)).rejects.toThrow(
      'store unavailable',
    );
    expect(await f.step(OHLCV)).toMatchObject({ status: 'RUNNING' });
    expect(f.artifacts.created).toEqual([f.primaryUri(OHLCV)]);

    const outcome = await f.harness.handleStepReady(f.message(OHLCV), { deliveryAttempt: 2 });
    expect(outcome).toMatchObject({ kind: 'recovered', status: 'SUCCEEDED', attempt: 1 });
    expect(handler.executions).toBe(1);
    expect(f.store.statusWrites(OHLCV)).toEqual(['RUNNING', 'SUCCEEDED']);
  });
});
