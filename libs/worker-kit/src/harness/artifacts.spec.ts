import { ArtifactWriteError, sha256Hex } from '@tda/artifacts';
import { describe, expect, it } from 'vitest';
import { ArtifactWriteRetryableError } from '../harness.errors';
import { TestStepHandler } from '../testing';
import { first, harnessFixtures, OHLCV } from '../testing/harness-fixture';

const fixture = harnessFixtures();

describe('StepHarness — artifacts', () => {
  /** A handler writing a chart and then its manifest (the primary), like CHART_EXPORT. */
  function chartHandler(): TestStepHandler {
    const handler = new TestStepHandler();
    handler.executeImpl = async (ctx) => ({
      artifacts: [
        {
          uri: ctx.artifactUri(),
          data: Buffer.from(
            JSON.stringify({ runId: ctx.run.runId, stepId: ctx.stepId, charts: 1 }),
          ),
          contentType: 'application/json',
        },
        { uri: ctx.artifactUri('.tpl.png'), data: Buffer.from('png-v2'), contentType: 'image/png' },
      ],
      primaryUri: ctx.artifactUri(),
    });
    return handler;
  }

  it('different bytes already under a name → FAILED GCS_WRITE_FAILED naming the conflict', async () => {
    const f = await fixture({ handler: chartHandler() });
    // A crashed earlier attempt wrote its chart (with other bytes) but never its primary.
    const chartUri = `gs://tda-artifacts/runs/${f.run.runId}/1d/${OHLCV}.tpl.png`;
    await f.artifacts.inner.put(chartUri, Buffer.from('png-v1'), { contentType: 'image/png' });
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(outcome).toMatchObject({
      kind: 'failed',
      status: 'FAILED',
      errorCode: 'GCS_WRITE_FAILED',
    });
    const error = (await f.step(OHLCV)).error;
    expect(error).toMatchObject({
      code: 'GCS_WRITE_FAILED',
      retryable: false,
      details: {
        reason: 'artifact_conflict',
        uri: chartUri,
        attemptedSha256: sha256Hex(Buffer.from('png-v2')),
      },
    });
    expect(error?.message).toContain('already exists with different content');
    // The primary is never written after a failed artifact: its absence keeps meaning "incomplete".
    expect(await f.artifacts.inner.exists(f.primaryUri(OHLCV))).toBe(false);
  });

  it('identical bytes already there (a re-execution) count as written', async () => {
    const f = await fixture({ handler: chartHandler() });
    const chartUri = `gs://tda-artifacts/runs/${f.run.runId}/1d/${OHLCV}.tpl.png`;
    await f.artifacts.inner.put(chartUri, Buffer.from('png-v2'), { contentType: 'image/png' });
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(outcome).toMatchObject({ kind: 'executed', status: 'SUCCEEDED' });
    expect(f.artifacts.created).toEqual([f.primaryUri(OHLCV)]);
  });

  it('a retryable write error is retried locally', async () => {
    const f = await fixture();
    f.artifacts.failNextPuts(2, new ArtifactWriteError(f.primaryUri(OHLCV), 'HTTP 503'));
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(outcome).toMatchObject({ kind: 'executed', status: 'SUCCEEDED' });
    expect(f.artifacts.puts).toBe(3);
  });

  it('retryable write errors past the local budget → throw (nack); the redelivery takes over its own orphan', async () => {
    const f = await fixture();
    f.artifacts.failNextPuts(3, new ArtifactWriteError(f.primaryUri(OHLCV), 'HTTP 503'));
    await expect(f.harness.handleStepReady(f.message(OHLCV), first)).rejects.toBeInstanceOf(
      ArtifactWriteRetryableError,
    );
    expect(await f.step(OHLCV)).toMatchObject({
      status: 'RUNNING',
      attempt: 1,
      lease: { owner: 'worker-a' },
    });

    const outcome = await f.harness.handleStepReady(f.message(OHLCV), { deliveryAttempt: 2 });
    expect(outcome).toMatchObject({ kind: 'executed', status: 'SUCCEEDED', attempt: 2 });
    expect(f.handler.executions).toBe(2);
  });

  it('its own orphan already at maxAttempts → FAILED RETRIES_EXHAUSTED, not executed again', async () => {
    const f = await fixture({ policy: { maxAttempts: 1 } });
    f.artifacts.failNextPuts(3, new ArtifactWriteError(f.primaryUri(OHLCV), 'HTTP 503'));
    await expect(f.harness.handleStepReady(f.message(OHLCV), first)).rejects.toBeInstanceOf(
      ArtifactWriteRetryableError,
    );
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), { deliveryAttempt: 2 });
    expect(outcome).toMatchObject({
      kind: 'failed',
      status: 'FAILED',
      errorCode: 'RETRIES_EXHAUSTED',
      attempt: 1,
    });
    expect(f.handler.executions).toBe(1);
    const step = await f.step(OHLCV);
    expect(step).toMatchObject({
      status: 'FAILED',
      attempt: 1,
      error: { code: 'RETRIES_EXHAUSTED' },
    });
    expect(step.lease).toBeUndefined();
  });
});
