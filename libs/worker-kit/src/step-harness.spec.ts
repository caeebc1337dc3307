import { ArtifactWriteError, InMemoryArtifactStore, sha256Hex } from '@tda/artifacts';
import type { FlowRun, FlowStep, StepReadyMessage, StepType } from '@tda/contracts';
import { advance, requestCancel, type RunPatch } from '@tda/flow-engine';
import { InMemoryFlowRunStore, updateWithRetry } from '@tda/flow-store';
import { makeFlowRun, makeStep } from '@tda/flow-store/testing';
import { buildTopology, InMemoryBroker, STEP_EVENTS_TOPIC } from '@tda/messaging';
import { createMemoryLogger, createMetrics, type MemoryLogger } from '@tda/observability';
import { expectEventually } from '@tda/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import type { CounterLike, StepHarnessMetrics } from './harness-metrics';
import type { StepHarnessPolicy } from './harness-policy';
import { ArtifactWriteRetryableError, HarnessShutdownError } from './harness.errors';
import { StepError, StepInputError } from './step-errors';
import { StepHarness } from './step-harness';
import type { StepAbortReason } from './step-handler';
import {
  CountingArtifactStore,
  CountingFlowRunStore,
  jsonResult,
  RecordingPublisher,
  TestStepHandler,
  untilAborted,
} from './testing';

const OHLCV = 'ohlcv_export:1d';
const REPORT = 'llm_report:1d:prompt_day_v1';
const T0 = Date.parse('2026-01-15T10:00:10.000Z');

/** Fast policy: no heartbeat unless a test asks for one, millisecond backoffs. */
const FAST: Partial<StepHarnessPolicy> = {
  leaseMs: 60_000,
  heartbeatMs: 30_000,
  timeoutMs: 5_000,
  handlerRetryBaseDelayMs: 1,
  handlerRetryMaxDelayMs: 4,
  artifactWriteBaseDelayMs: 1,
  infraBaseDelayMs: 1,
};

const brokers: InMemoryBroker[] = [];
afterEach(async () => {
  await Promise.all(brokers.splice(0).map((b) => b.close()));
});

interface FixtureOptions {
  run?: FlowRun;
  handler?: TestStepHandler;
  policy?: Partial<StepHarnessPolicy>;
  metrics?: StepHarnessMetrics;
}

async function fixture(options: FixtureOptions = {}) {
  const clock = (): Date => new Date(T0);
  const store = new CountingFlowRunStore(new InMemoryFlowRunStore({ clock }));
  const artifacts = new CountingArtifactStore(new InMemoryArtifactStore());
  const broker = new InMemoryBroker();
  brokers.push(broker);
  broker.applyTopology(buildTopology());
  const publisher = new RecordingPublisher(broker);
  const log: MemoryLogger = createMemoryLogger();
  const handler = options.handler ?? new TestStepHandler('OHLCV_EXPORT');
  const run = options.run ?? makeFlowRun();
  await store.inner.create(run);
  const makeHarness = (owner = 'worker-a', stepHandler: TestStepHandler = handler): StepHarness =>
    new StepHarness({
      handler: stepHandler,
      store,
      artifacts,
      publisher,
      logger: log.logger,
      clock,
      owner,
      policy: { ...FAST, ...options.policy },
      random: () => 0,
      ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    });
  return {
    store,
    artifacts,
    publisher,
    log,
    handler,
    run,
    clock,
    harness: makeHarness(),
    makeHarness,
    message(
      stepId: string,
      stepType: StepType = run.steps[stepId]?.stepType ?? 'OHLCV_EXPORT',
    ): StepReadyMessage {
      return {
        runId: run.runId,
        stepId,
        stepType,
        attempt: 0,
        dispatchedAt: clock().toISOString(),
      };
    },
    async step(stepId: string): Promise<FlowStep> {
      const current = await store.inner.get(run.runId);
      const step = current?.run.steps[stepId];
      if (step === undefined) throw new Error(`no step ${stepId}`);
      return step;
    },
    /** A write by someone else (not counted as the harness's). */
    async writeAsOther(patch: RunPatch | ((run: FlowRun) => RunPatch)): Promise<void> {
      await updateWithRetry(store.inner, run.runId, (current) => ({
        kind: 'write',
        patch: typeof patch === 'function' ? patch(current) : patch,
        result: null,
      }));
    },
    primaryUri(stepId: string, timeframe = '1d'): string {
      return `gs://tda-artifacts/runs/${run.runId}/${timeframe}/${stepId}.json`;
    },
    stepEvents(): unknown[] {
      return publisher.published.filter((p) => p.topic === STEP_EVENTS_TOPIC).map((p) => p.body);
    },
  };
}

type Fixture = Awaited<ReturnType<typeof fixture>>;

const first = { deliveryAttempt: 1 };

/** A promise with its resolver, to let a test act while a handler is mid-execution. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

function expectNoSideEffects(f: Fixture): void {
  expect(f.store.updates).toBe(0);
  expect(f.store.writes).toBe(0);
  expect(f.artifacts.puts).toBe(0);
  expect(f.handler.executions).toBe(0);
  expect(f.stepEvents()).toEqual([]);
}

describe('StepHarness — happy path', () => {
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
    // DESIGN §8 budget: claim + finalize read the run once each.
    expect(f.store.gets).toBe(2);

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
          { uri: primary, data: Buffer.from('{"manifest":true}'), contentType: 'application/json' },
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

describe('StepHarness — duplicates and ordering (seed 002 scenario A)', () => {
  it('a duplicate delivered after completion is a no-op: one execution, one finalize', async () => {
    const f = await fixture();
    const message = f.message(OHLCV);
    await f.harness.handleStepReady(message, first);
    f.store.resetCounts();
    const again = await f.harness.handleStepReady(message, { deliveryAttempt: 2 });

    expect(again).toEqual({ action: 'ack', kind: 'noop', reason: 'not_ready' });
    expect(f.handler.executions).toBe(1);
    expect(f.store.writes).toBe(0);
    expect(f.stepEvents()).toHaveLength(1);
  });

  it('two concurrent copies in one worker: one execution; the other acks without a read', async () => {
    const f = await fixture();
    const message = f.message(OHLCV);
    const outcomes = await Promise.all([
      f.harness.handleStepReady(message, first),
      f.harness.handleStepReady(message, first),
    ]);
    expect(outcomes.map((o) => o.kind).sort()).toEqual(['executed', 'noop']);
    expect(outcomes.find((o) => o.kind === 'noop')?.reason).toBe('duplicate_in_process');
    expect(f.handler.executions).toBe(1);
    expect(f.store.statusWrites(OHLCV)).toEqual(['RUNNING', 'SUCCEEDED']);
    expect(f.stepEvents()).toHaveLength(1);
  });

  it('two workers racing for one step: the precondition lets exactly one claim', async () => {
    const handler = new TestStepHandler();
    handler.executeImpl = async (ctx) => {
      await new Promise((resolve) => setTimeout(resolve, 15));
      return jsonResult(ctx);
    };
    const f = await fixture({ handler });
    const message = f.message(OHLCV);
    const a = f.makeHarness('worker-a');
    const b = f.makeHarness('worker-b');
    const outcomes = await Promise.all([
      a.handleStepReady(message, first),
      b.handleStepReady(message, first),
    ]);

    expect(outcomes.map((o) => o.kind).sort()).toEqual(['executed', 'noop']);
    expect(['already_running', 'not_ready']).toContain(
      outcomes.find((o) => o.kind === 'noop')?.reason,
    );
    expect(handler.executions).toBe(1);
    expect(f.store.statusWrites(OHLCV)).toEqual(['RUNNING', 'SUCCEEDED']);
    expect(f.artifacts.puts).toBe(1);
    expect(f.stepEvents()).toHaveLength(1);
  });

  it('a message for a step whose dependency has not succeeded is a no-op; the later one executes', async () => {
    const reportHandler = new TestStepHandler('LLM_REPORT');
    const f = await fixture({ handler: reportHandler });
    const early = await f.harness.handleStepReady(f.message(REPORT), first);
    expect(early).toMatchObject({ kind: 'noop', reason: 'not_ready' });
    expectNoSideEffects(f);

    // The dependency runs, the orchestrator advances, and the right message arrives.
    const ohlcvHandler = new TestStepHandler('OHLCV_EXPORT');
    await f.makeHarness('worker-o', ohlcvHandler).handleStepReady(f.message(OHLCV), first);
    await f.writeAsOther((run) => advance(run, f.clock()).patch);
    const later = await f.harness.handleStepReady(f.message(REPORT), first);
    expect(later).toMatchObject({ kind: 'executed', status: 'SUCCEEDED' });
    expect(reportHandler.executions).toBe(1);
  });

  const notExecutable: [string, () => FlowRun, string, string][] = [
    ['the step is PENDING', () => makeFlowRun(), REPORT, 'not_ready'],
    [
      'the step is READY but a dependency has not SUCCEEDED',
      () =>
        makeFlowRun({
          steps: {
            [OHLCV]: makeStep({
              status: 'RUNNING',
              attempt: 1,
              lease: { owner: 'x', expiresAt: '2030-01-01T00:00:00.000Z' },
            }),
            [REPORT]: makeStep({ stepType: 'LLM_REPORT', dependsOn: [OHLCV] }),
          },
        }),
      REPORT,
      'unmet_dependencies',
    ],
    ['the run is not RUNNING', () => makeFlowRun({ status: 'PENDING' }), OHLCV, 'run_not_running'],
    [
      'cancel was requested',
      () => makeFlowRun({ cancelRequestedAt: '2026-01-15T10:00:05.000Z' }),
      OHLCV,
      'cancel_requested',
    ],
    [
      'the step already SUCCEEDED',
      () =>
        makeFlowRun({
          steps: {
            [OHLCV]: makeStep({
              status: 'SUCCEEDED',
              attempt: 1,
              finishedAt: '2026-01-15T10:00:05.000Z',
            }),
          },
        }),
      OHLCV,
      'not_ready',
    ],
  ];

  it.each(notExecutable)(
    '%s → ack noop, zero store and artifact writes',
    async (_name, build, stepId, reason) => {
      const run = build();
      const stepType = run.steps[stepId]?.stepType ?? 'OHLCV_EXPORT';
      const f = await fixture({ run, handler: new TestStepHandler(stepType) });
      const outcome = await f.harness.handleStepReady(f.message(stepId), first);
      expect(outcome).toEqual({ action: 'ack', kind: 'noop', reason });
      expectNoSideEffects(f);
      expect(f.log.withEvent('step_noop')[0]).toMatchObject({ reason });
    },
  );

  it('a message of another step type, or for a missing run, is a no-op without writes', async () => {
    const f = await fixture();
    expect(await f.harness.handleStepReady(f.message(OHLCV, 'CHART_EXPORT'), first)).toMatchObject({
      kind: 'noop',
      reason: 'step_type_mismatch',
    });
    const missing = { ...f.message(OHLCV), runId: '20260115-100000_BTC-USDT_zzz' };
    expect(await f.harness.handleStepReady(missing, first)).toMatchObject({
      kind: 'noop',
      reason: 'run_not_found',
    });
    expectNoSideEffects(f);
  });
});

describe('StepHarness — invalid messages and runs', () => {
  it('an invalid body is acked as invalid with zero reads', async () => {
    const f = await fixture();
    const outcome = await f.harness.handleStepReady({ runId: 'nope' }, first);
    expect(outcome).toMatchObject({ action: 'ack', kind: 'invalid', reason: 'invalid_message' });
    expect(f.store.gets).toBe(0);
    expectNoSideEffects(f);
  });

  it('a storage-unsafe stepId → FLOW_RUN_INVALID, acked, no patch', async () => {
    const f = await fixture();
    const outcome = await f.harness.handleStepReady(
      { ...f.message(OHLCV), stepId: 'ohlcv_export.1d' },
      first,
    );
    expect(outcome).toMatchObject({
      action: 'ack',
      kind: 'invalid',
      reason: 'unsafe_step_id',
      errorCode: 'FLOW_RUN_INVALID',
    });
    expect(f.store.gets).toBe(0);
    expectNoSideEffects(f);
  });

  it('unknown dependsOn → the step is FAILED with INVALID_STEP_INPUTS and a step event', async () => {
    const run = makeFlowRun({ steps: { [OHLCV]: makeStep({ dependsOn: ['ghost:1d'] }) } });
    const f = await fixture({ run });
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(outcome).toMatchObject({
      kind: 'failed',
      status: 'FAILED',
      errorCode: 'INVALID_STEP_INPUTS',
    });
    expect(f.store.statusWrites(OHLCV)).toEqual(['FAILED']);
    expect(f.handler.executions).toBe(0);
    const step = await f.step(OHLCV);
    expect(step.error).toMatchObject({
      code: 'INVALID_STEP_INPUTS',
      retryable: false,
      details: { unknownDependencies: ['ghost:1d'] },
    });
    expect(f.stepEvents()).toEqual([
      expect.objectContaining({ status: 'FAILED', errorCode: 'INVALID_STEP_INPUTS' }),
    ]);
  });
});

describe('StepHarness — handler failures', () => {
  it('StepInputError from validateInputs → FAILED INVALID_STEP_INPUTS, never executed', async () => {
    const handler = new TestStepHandler();
    handler.validateImpl = () => {
      throw new StepInputError('inputs.symbol is missing', { field: 'symbol' });
    };
    const f = await fixture({ handler });
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(outcome).toMatchObject({
      kind: 'failed',
      status: 'FAILED',
      errorCode: 'INVALID_STEP_INPUTS',
    });
    expect(handler.executions).toBe(0);
    expect(f.artifacts.puts).toBe(0);
    expect((await f.step(OHLCV)).error).toEqual({
      code: 'INVALID_STEP_INPUTS',
      message: 'inputs.symbol is missing',
      retryable: false,
      details: { field: 'symbol' },
    });
    expect(f.store.statusWrites(OHLCV)).toEqual(['RUNNING', 'FAILED']);
  });

  it('a retryable StepError twice, then success → SUCCEEDED after 3 tries', async () => {
    const handler = new TestStepHandler();
    handler.executeImpl = async (ctx) => {
      if (handler.executions < 3) throw new StepError('MARKET_DATA_UNAVAILABLE', 'exchange 503');
      return jsonResult(ctx);
    };
    const f = await fixture({ handler });
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(outcome).toMatchObject({ kind: 'executed', status: 'SUCCEEDED', tries: 3, attempt: 1 });
    expect(handler.executions).toBe(3);
    expect(f.store.statusWrites(OHLCV)).toEqual(['RUNNING', 'SUCCEEDED']);
    expect(f.log.withEvent('step_retry').filter((r) => r['willRetry'] === true)).toHaveLength(2);
  });

  it('a retryable StepError on every try → FAILED with that code after handlerMaxTries', async () => {
    const handler = new TestStepHandler();
    handler.executeImpl = async () => {
      throw new StepError('LLM_UNAVAILABLE', 'model 503');
    };
    const f = await fixture({ handler });
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(outcome).toMatchObject({ kind: 'failed', errorCode: 'LLM_UNAVAILABLE', tries: 3 });
    expect(handler.executions).toBe(3);
    expect((await f.step(OHLCV)).error).toMatchObject({
      code: 'LLM_UNAVAILABLE',
      retryable: true,
      details: { tries: 3 },
    });
  });

  it("a StepError's execution section is persisted with the failure (last try; timing stays the harness's)", async () => {
    const handler = new TestStepHandler();
    handler.executeImpl = async () => {
      throw new StepError('LLM_UNAVAILABLE', 'model 503', {
        execution: {
          llm: { attempts: { total: 1 }, calls: handler.executions },
          timing: { startedAt: '1999-01-01T00:00:00.000Z' },
        },
      });
    };
    const f = await fixture({ handler });
    await f.harness.handleStepReady(f.message(OHLCV), first);
    const step = await f.step(OHLCV);
    expect(step.status).toBe('FAILED');
    expect(step.outputs.execution).toEqual({
      llm: { attempts: { total: 1 }, calls: 3 },
      worker: 'worker-a',
      timing: {
        startedAt: new Date(T0).toISOString(),
        finishedAt: new Date(T0).toISOString(),
        durationMs: 0,
      },
    });
  });

  it('does not retry when the backoff would cross the deadline', async () => {
    const handler = new TestStepHandler();
    handler.executeImpl = async () => {
      throw new StepError('LLM_UNAVAILABLE', 'model 503');
    };
    const f = await fixture({
      handler,
      policy: { timeoutMs: 100, handlerRetryBaseDelayMs: 1_000, handlerRetryMaxDelayMs: 4_000 },
    });
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(outcome).toMatchObject({ kind: 'failed', errorCode: 'LLM_UNAVAILABLE', tries: 1 });
  });

  it('an unexpected exception → FAILED INTERNAL_ERROR without its raw message', async () => {
    const handler = new TestStepHandler();
    handler.executeImpl = async () => {
      throw new TypeError('cannot read the PROMPT TEXT of the user');
    };
    const f = await fixture({ handler });
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(outcome).toMatchObject({ kind: 'failed', errorCode: 'INTERNAL_ERROR' });
    expect(handler.executions).toBe(1);
    const error = (await f.step(OHLCV)).error;
    expect(error).toMatchObject({ code: 'INTERNAL_ERROR', details: { errorClass: 'TypeError' } });
    expect(JSON.stringify(error)).not.toContain('PROMPT TEXT');
    expect(f.log.withEvent('step_failed')[0]).toMatchObject({
      errorCode: 'INTERNAL_ERROR',
      error: { name: 'TypeError' },
    });
  });

  it('a result with failure → FAILED with that code, the artifact still written', async () => {
    const handler = new TestStepHandler();
    handler.executeImpl = async (ctx) => ({
      ...jsonResult(ctx, { images: 1 }),
      failure: { code: 'INVALID_STEP_INPUTS', message: 'only 1 of 2 charts rendered' },
    });
    const f = await fixture({ handler });
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(outcome).toMatchObject({
      kind: 'failed',
      status: 'FAILED',
      errorCode: 'INVALID_STEP_INPUTS',
    });
    expect(f.artifacts.created).toEqual([f.primaryUri(OHLCV)]);
    expect((await f.step(OHLCV)).outputs.execution?.artifact?.gcs_uri).toBe(f.primaryUri(OHLCV));
  });

  it('an invalid result (primary not written, unstorable outputs) fails the step clearly', async () => {
    const handler = new TestStepHandler();
    handler.executeImpl = async (ctx) => ({ artifacts: [], primaryUri: ctx.artifactUri() });
    const f = await fixture({ handler });
    expect(await f.harness.handleStepReady(f.message(OHLCV), first)).toMatchObject({
      kind: 'failed',
      errorCode: 'INTERNAL_ERROR',
    });
    expect((await f.step(OHLCV)).error?.message).toContain('primary artifact');

    const badOutputs = new TestStepHandler();
    badOutputs.executeImpl = async (ctx) => ({ ...jsonResult(ctx), outputs: { 'a.b': 1 } });
    const g = await fixture({ handler: badOutputs });
    expect(await g.harness.handleStepReady(g.message(OHLCV), first)).toMatchObject({
      kind: 'failed',
      errorCode: 'INTERNAL_ERROR',
    });
    expect((await g.step(OHLCV)).error?.message).toContain('could not be stored');
  });
});

describe('StepHarness — deadline, cancel, lease loss, shutdown', () => {
  it('deadline → signal aborted, FAILED STEP_TIMEOUT (even if the handler ignores the signal)', async () => {
    const handler = new TestStepHandler();
    handler.executeImpl = () => new Promise(() => undefined);
    const f = await fixture({ handler, policy: { timeoutMs: 40 } });
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(outcome).toMatchObject({ kind: 'failed', status: 'FAILED', errorCode: 'STEP_TIMEOUT' });
    expect(handler.signals[0]?.aborted).toBe(true);
    expect(handler.signals[0]?.reason).toEqual({ kind: 'deadline' } satisfies StepAbortReason);
    expect(f.artifacts.puts).toBe(0);
    expect(f.store.statusWrites(OHLCV)).toEqual(['RUNNING', 'FAILED']);
  });

  it('cancel requested during execution → signal aborted, step CANCELLED', async () => {
    const handler = new TestStepHandler();
    const started = deferred();
    handler.executeImpl = (ctx) => {
      started.resolve();
      return untilAborted(ctx.signal);
    };
    const f = await fixture({ handler, policy: { heartbeatMs: 15 } });
    const pending = f.harness.handleStepReady(f.message(OHLCV), first);
    await started.promise;
    await f.writeAsOther((run) => {
      const decision = requestCancel(run, f.clock());
      return decision.kind === 'noop' ? {} : decision.patch;
    });
    const outcome = await pending;

    expect(outcome).toMatchObject({ kind: 'failed', status: 'CANCELLED', errorCode: 'CANCELLED' });
    expect(handler.signals[0]?.reason).toEqual({ kind: 'cancelled' } satisfies StepAbortReason);
    const step = await f.step(OHLCV);
    expect(step.status).toBe('CANCELLED');
    expect(step.error).toMatchObject({ code: 'CANCELLED', details: { cause: 'cancel_requested' } });
    expect(f.artifacts.puts).toBe(0);
    expect(f.stepEvents()).toEqual([expect.objectContaining({ status: 'CANCELLED' })]);
  });

  it('the claim records the effective policy (deadlineAt = claim + timeoutMs, maxAttempts)', async () => {
    const handler = new TestStepHandler();
    let seen: FlowStep | undefined;
    handler.executeImpl = async (ctx) => {
      seen = ctx.step;
      return jsonResult(ctx);
    };
    const f = await fixture({ handler, policy: { timeoutMs: 7_000, maxAttempts: 4 } });
    await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(seen).toMatchObject({
      status: 'RUNNING',
      deadlineAt: new Date(T0 + 7_000).toISOString(),
      maxAttempts: 4,
    });
    expect(await f.step(OHLCV)).toMatchObject({ status: 'SUCCEEDED', maxAttempts: 4 });
  });

  it('the run deadline passing mid-step aborts the handler at once → CANCELLED (deadline_passed)', async () => {
    const handler = new TestStepHandler();
    handler.executeImpl = (ctx) => untilAborted(ctx.signal);
    // heartbeats far apart: only the harness's own run-deadline timer can stop the handler
    const run = makeFlowRun({ deadlineAt: new Date(T0 + 60).toISOString() });
    const f = await fixture({ handler, run, policy: { heartbeatMs: 30_000 } });
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);

    expect(outcome).toMatchObject({ kind: 'failed', status: 'CANCELLED', errorCode: 'CANCELLED' });
    expect(handler.signals[0]?.reason).toEqual({ kind: 'cancelled' } satisfies StepAbortReason);
    expect((await f.step(OHLCV)).error).toMatchObject({ details: { cause: 'deadline_passed' } });
    expect(f.store.statusWrites(OHLCV)).toEqual(['RUNNING', 'CANCELLED']);
    expect(f.artifacts.puts).toBe(0);
  });

  it('a run already past its deadline at the claim → CANCELLED without executing', async () => {
    const run = makeFlowRun({ deadlineAt: new Date(T0 - 1).toISOString() });
    const f = await fixture({ run });
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(outcome).toMatchObject({ status: 'CANCELLED', tries: 0 });
    expect(f.handler.executions).toBe(0);
    expect((await f.step(OHLCV)).error).toMatchObject({ details: { cause: 'deadline_passed' } });
  });

  it('lease stolen by another worker → handler aborted, NO further write', async () => {
    const handler = new TestStepHandler();
    const started = deferred();
    handler.executeImpl = (ctx) => {
      started.resolve();
      return untilAborted(ctx.signal);
    };
    const f = await fixture({ handler, policy: { heartbeatMs: 15 } });
    const pending = f.harness.handleStepReady(f.message(OHLCV), first);
    await started.promise;
    const writesBeforeSteal = f.store.writes;
    await f.writeAsOther({
      [`steps.${OHLCV}.lease`]: { owner: 'worker-b', expiresAt: '2030-01-01T00:00:00.000Z' },
    });
    const outcome = await pending;

    expect(outcome).toEqual({ action: 'ack', kind: 'noop', reason: 'lease_lost' });
    expect(handler.signals[0]?.reason).toEqual({ kind: 'lease_lost' } satisfies StepAbortReason);
    expect(f.store.writes).toBe(writesBeforeSteal);
    expect(f.store.statusWrites(OHLCV)).toEqual(['RUNNING']);
    expect(f.artifacts.puts).toBe(0);
    expect(f.stepEvents()).toEqual([]);
    const step = await f.step(OHLCV);
    expect(step).toMatchObject({ status: 'RUNNING', lease: { owner: 'worker-b' } });
    expect(f.log.withEvent('lease_lost')[0]).toMatchObject({
      reason: 'owner_mismatch',
      leaseOwner: 'worker-b',
    });
  });

  it('heartbeats extend the lease at most once per period and carry only the latest progress', async () => {
    const handler = new TestStepHandler();
    handler.executeImpl = async (ctx) => {
      ctx.heartbeat({ stage: 'download' });
      ctx.heartbeat({ stage: 'resample', processedUnits: 1, totalUnits: 3 });
      ctx.heartbeat({ stage: 'resample', processedUnits: 3, totalUnits: 3 });
      await new Promise((resolve) => setTimeout(resolve, 130));
      return jsonResult(ctx);
    };
    const heartbeatMs = 30;
    const f = await fixture({ handler, policy: { heartbeatMs } });
    const startedAt = performance.now();
    await f.harness.handleStepReady(f.message(OHLCV), first);
    const elapsed = performance.now() - startedAt;

    const beats = f.store.recorded.filter(
      (u) => u.ok && `steps.${OHLCV}.lease.expiresAt` in u.patch,
    );
    expect(beats.length).toBeGreaterThanOrEqual(1);
    expect(beats.length).toBeLessThanOrEqual(Math.floor(elapsed / heartbeatMs));
    for (let i = 1; i < beats.length; i += 1) {
      const gap = (beats[i]?.at ?? 0) - (beats[i - 1]?.at ?? 0);
      expect(gap).toBeGreaterThanOrEqual(heartbeatMs - 1);
    }
    expect(beats[0]?.patch[`steps.${OHLCV}.progress`]).toMatchObject({
      stage: 'resample',
      processedUnits: 3,
      totalUnits: 3,
    });
    // Later beats had no new progress: lease only.
    for (const beat of beats.slice(1)) expect(`steps.${OHLCV}.progress` in beat.patch).toBe(false);
    expect((await f.step(OHLCV)).status).toBe('SUCCEEDED');
  });

  it('shutdown aborts running handlers, writes nothing more and nacks; new deliveries nack', async () => {
    const handler = new TestStepHandler();
    const started = deferred();
    handler.executeImpl = (ctx) => {
      started.resolve();
      return untilAborted(ctx.signal);
    };
    const f = await fixture({ handler });
    const pending = f.harness.handleStepReady(f.message(OHLCV), first);
    await started.promise;
    await f.harness.shutdown();
    await expect(pending).rejects.toBeInstanceOf(HarnessShutdownError);
    expect(handler.signals[0]?.reason).toEqual({ kind: 'shutdown' } satisfies StepAbortReason);
    expect(f.store.statusWrites(OHLCV)).toEqual(['RUNNING']);
    await expect(f.harness.handleStepReady(f.message(OHLCV), first)).rejects.toBeInstanceOf(
      HarnessShutdownError,
    );
  });
});

describe('StepHarness — artifacts', () => {
  /** A handler writing a chart and then its manifest (the primary), like CHART_EXPORT. */
  function chartHandler(): TestStepHandler {
    const handler = new TestStepHandler();
    handler.executeImpl = async (ctx) => ({
      artifacts: [
        {
          uri: ctx.artifactUri(),
          data: Buffer.from('{"charts":1}'),
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
  const ARTIFACT = Buffer.from('{"rows":[1,2,3]}');

  async function withArtifact(run: FlowRun, handler?: TestStepHandler) {
    const f = await fixture({ run, ...(handler === undefined ? {} : { handler }) });
    await f.artifacts.inner.put(f.primaryUri(OHLCV), ARTIFACT, { contentType: 'application/json' });
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
    const handler = new TestStepHandler().withRecover(async (ctx) => ({
      artifacts: [],
      primaryUri: ctx.existingUri,
      outputs: { rowCount: 3 },
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

describe('StepHarness — redelivery bound and infrastructure errors', () => {
  it('deliveryAttempt over maxDeliveryAttempts → FAILED RETRIES_EXHAUSTED without executing', async () => {
    const f = await fixture({ policy: { maxDeliveryAttempts: 10 } });
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), { deliveryAttempt: 11 });
    expect(outcome).toMatchObject({
      kind: 'failed',
      status: 'FAILED',
      errorCode: 'RETRIES_EXHAUSTED',
    });
    expect(f.handler.executions).toBe(0);
    expect((await f.step(OHLCV)).error).toMatchObject({
      code: 'RETRIES_EXHAUSTED',
      details: { deliveryAttempt: 11, maxDeliveryAttempts: 10 },
    });
  });

  it('deliveryAttempt at the max still executes', async () => {
    const f = await fixture({ policy: { maxDeliveryAttempts: 10 } });
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), { deliveryAttempt: 10 });
    expect(outcome).toMatchObject({ kind: 'executed' });
  });

  it('the store unavailable on the claim read → throws (nack), nothing written', async () => {
    const f = await fixture();
    f.store.failNextGets(1);
    await expect(f.harness.handleStepReady(f.message(OHLCV), first)).rejects.toThrow(
      'store unavailable',
    );
    expectNoSideEffects(f);
  });

  it('another writer landing between read and claim → re-read, re-decided, claimed once', async () => {
    const f = await fixture();
    f.store.onceBeforeNextUpdate(() =>
      f.writeAsOther({ [`steps.${REPORT}.inputs`]: { touched: true } }),
    );
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(outcome).toMatchObject({ kind: 'executed' });
    expect(f.store.recorded.filter((u) => !u.ok)).toHaveLength(1);
    expect(f.store.statusWrites(OHLCV)).toEqual(['RUNNING', 'SUCCEEDED']);
    expect(f.log.withEvent('step_claim_conflict')[0]).toMatchObject({
      attempts: 2,
      resolvedAs: 'written',
    });
  });

  it('conflicts beyond claimMaxAttempts → throws (nack)', async () => {
    const f = await fixture({ policy: { claimMaxAttempts: 2 } });
    const bump = (): Promise<void> =>
      f.writeAsOther({ [`steps.${REPORT}.inputs`]: { n: Math.random() } });
    f.store.onceBeforeNextUpdate(async () => {
      await bump();
      f.store.onceBeforeNextUpdate(bump);
    });
    await expect(f.harness.handleStepReady(f.message(OHLCV), first)).rejects.toMatchObject({
      name: 'ConflictRetriesExhaustedError',
    });
    expect(f.store.writes).toBe(0);
    expect(f.handler.executions).toBe(0);
    expect(f.log.withEvent('step_claim_conflict')[0]).toMatchObject({ action: 'nack' });
  });

  it('a step event that cannot be published is logged; the durable finalize is still acked', async () => {
    const f = await fixture();
    f.publisher.failNextPublishes(3);
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(outcome).toMatchObject({ kind: 'executed', stepEventPublished: false });
    expect((await f.step(OHLCV)).status).toBe('SUCCEEDED');
    await expectEventually(() => {
      expect(
        f.log.records.some((r) => r.event === 'step_event_publish_failed' && r['ok'] === false),
      ).toBe(true);
    });
  });
});
