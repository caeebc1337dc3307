import { sha256Hex } from '@tda/artifacts';
import { createMetrics } from '@tda/observability';
import { makeFlowRun, makeParallelSteps } from '@tda/flow-store/testing';
import { describe, expect, it } from 'vitest';
import type { CounterLike } from '../harness-metrics';
import { jsonResult, TestStepHandler } from '../testing';
import { first, harnessFixtures, OHLCV, T0 } from '../testing/harness-fixture';

const fixture = harnessFixtures();

describe('StepHarness — happy path', () => {
  it('reads the run before the finalize when a sibling step was in flight at the claim', async () => {
    const steps = makeParallelSteps(2);
    const f = await fixture({ run: makeFlowRun({ steps }) });
    const [mine] = Object.keys(steps);
    if (mine === undefined) throw new Error('no step');
    const outcome = await f.harness.handleStepReady(f.message(mine), first);

    expect(outcome).toMatchObject({ action: 'ack', kind: 'executed', status: 'SUCCEEDED' });
    // A fan-out's snapshot is stale by the finalize: read, not a refused write first.
    expect(f.store.gets).toBe(2);
    expect(f.store.recorded.filter((u) => !u.ok)).toHaveLength(0);
  });

  it('finalizes from a fresh read when the run changed after the claim', async () => {
    const f = await fixture();
    f.handler.executeImpl = async (context) => {
      // Another writer (a heartbeat, the orchestrator) moves the run on while the step works.
      const current = await f.store.inner.get(f.run.runId);
      if (current !== null) await f.store.inner.update(f.run.runId, {}, current.version);
      return jsonResult(context);
    };
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);

    expect(outcome).toMatchObject({ action: 'ack', kind: 'executed', status: 'SUCCEEDED' });
    expect(f.store.statusWrites(OHLCV)).toEqual(['RUNNING', 'SUCCEEDED']);
    // The finalize's write on the claim's version was refused, then read again and written.
    expect(f.store.recorded.filter((u) => !u.ok)).toHaveLength(1);
    expect(f.store.gets).toBe(2);
    expect((await f.step(OHLCV)).status).toBe('SUCCEEDED');
  });

  it('claims, executes once, writes the artifact, finalizes and publishes one step event', async () => {
    const f = await fixture();
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);

    expect(outcome).toMatchObject({
      action: 'ack',
      kind: 'executed',
      status: 'SUCCEEDED',
      attempt: 1,
      tries: 1,
      stepEventPublished: true,
    });
    expect(f.handler.executions).toBe(1);
    expect(f.store.statusWrites(OHLCV)).toEqual(['RUNNING', 'SUCCEEDED']);
    expect(f.store.writes).toBe(2);
    // DESIGN §8 budget: the claim reads the run; the finalize starts from what the claim wrote.
    expect(f.store.gets).toBe(1);

    const uri = f.primaryUri(OHLCV);
    expect(f.artifacts.created).toEqual([uri]);
    const data = await f.artifacts.inner.read(uri);
    const step = await f.step(OHLCV);
    expect(step.status).toBe('SUCCEEDED');
    expect(step.lease).toBeUndefined();
    expect(step.outputs.gcs_uri).toBe(uri);
    expect(step.outputs.execution).toMatchObject({
      worker: 'worker-a',
      artifact: {
        gcs_uri: uri,
        sha256: sha256Hex(data),
        bytes: data.length,
        contentType: 'application/json',
      },
      timing: {
        startedAt: new Date(T0).toISOString(),
        finishedAt: new Date(T0).toISOString(),
        durationMs: 0,
      },
    });
    expect(f.stepEvents()).toEqual([
      {
        runId: f.run.runId,
        stepId: OHLCV,
        stepType: 'OHLCV_EXPORT',
        status: 'SUCCEEDED',
        attempt: 1,
        at: new Date(T0).toISOString(),
      },
    ]);
    expect(f.publisher.published[0]?.attributes).toMatchObject({ messageType: 'step_event' });
    expect(f.log.withEvent('step_claimed')).toHaveLength(1);
    expect(f.log.withEvent('step_succeeded')[0]).toMatchObject({
      runId: f.run.runId,
      stepId: OHLCV,
      stepType: 'OHLCV_EXPORT',
      attempt: 1,
    });
  });

  it('merges the handler outputs and execution metadata, primary written last', async () => {
    const handler = new TestStepHandler();
    handler.executeImpl = async (ctx) => {
      const primary = ctx.artifactUri();
      const png = ctx.artifactUri('.chart.png');
      return {
        artifacts: [
          {
            uri: primary,
            data: Buffer.from(
              JSON.stringify({ runId: ctx.run.runId, stepId: ctx.stepId, manifest: true }),
            ),
            contentType: 'application/json',
          },
          { uri: png, data: Buffer.from('png-bytes'), contentType: 'image/png' },
        ],
        primaryUri: primary,
        outputs: { outputsManifestGcsUri: primary },
        execution: { rows: 42 },
      };
    };
    const f = await fixture({ handler });
    await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(f.artifacts.created).toEqual([
      `gs://tda-artifacts/runs/${f.run.runId}/1d/${OHLCV}.chart.png`,
      f.primaryUri(OHLCV),
    ]);
    const step = await f.step(OHLCV);
    expect(step.outputs['outputsManifestGcsUri']).toBe(f.primaryUri(OHLCV));
    expect(step.outputs.execution?.['rows']).toBe(42);
  });

  it('counts deliveries and durations through the optional metrics', async () => {
    const incs: { labels: Record<string, string>; value: number | undefined }[] = [];
    const counter: CounterLike = { inc: (labels, value) => incs.push({ labels, value }) };
    const observed: number[] = [];
    const outcomes: Record<string, string>[] = [];
    const claims: Record<string, string>[] = [];
    const f = await fixture({
      metrics: {
        stepDeliveries: counter,
        stepDurationSeconds: { observe: (_labels, value) => observed.push(value) },
        stepOutcomes: { inc: (labels) => outcomes.push(labels) },
        stepClaims: { inc: (labels) => claims.push(labels) },
      },
    });
    await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(incs).toEqual([
      {
        labels: { stepType: 'OHLCV_EXPORT', outcome: 'executed', status: 'SUCCEEDED' },
        value: undefined,
      },
    ]);
    expect(observed).toEqual([0]);
    expect(outcomes).toEqual([
      { stepType: 'OHLCV_EXPORT', status: 'SUCCEEDED', errorCode: 'none' },
    ]);
    expect(claims).toEqual([{ stepType: 'OHLCV_EXPORT', result: 'claimed' }]);
  });
});

describe('StepHarness — metrics from @tda/observability', () => {
  it('createMetrics() plugs in as StepHarnessMetrics and records the delivery', async () => {
    const metrics = createMetrics({ service: 'worker-test' });
    const f = await fixture({ metrics });
    await f.harness.handleStepReady(f.message(OHLCV), first);
    const text = await metrics.render();
    expect(text).toMatch(
      /tda_step_deliveries_total\{[^}]*step_type="OHLCV_EXPORT"[^}]*outcome="executed"[^}]*\} 1/,
    );
    expect(text).toMatch(/tda_step_claims_total\{[^}]*result="claimed"[^}]*\} 1/);
  });
});
