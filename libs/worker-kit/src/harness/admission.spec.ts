import type { FlowRun } from '@tda/contracts';
import { advance } from '@tda/flow-engine';
import { makeFlowRun, makeStep } from '@tda/flow-store/testing';
import { describe, expect, it } from 'vitest';
import { jsonResult, TestStepHandler } from '../testing';
import {
  expectNoSideEffects,
  first,
  harnessFixtures,
  OHLCV,
  REPORT,
} from '../testing/harness-fixture';

const fixture = harnessFixtures();

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
      const typed = stepType === 'LLM_REPORT' ? 'LLM_REPORT' : 'OHLCV_EXPORT';
      const f = await fixture({ run, handler: new TestStepHandler(typed) });
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

describe('StepHarness — admission of unusable runs and poison messages', () => {
  it('a run document that fails its contract → FLOW_RUN_INVALID, acked, nothing written', async () => {
    const f = await fixture();
    // Another writer broke the document (a status outside the enum): every read refuses it.
    await f.writeAsOther({ status: 'BOGUS' });
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), first);
    expect(outcome).toMatchObject({
      action: 'ack',
      kind: 'invalid',
      reason: 'invalid_run_document',
      errorCode: 'FLOW_RUN_INVALID',
    });
    expect(f.store.writes).toBe(0);
    expect(f.handler.executions).toBe(0);
    expect(f.log.withEvent('step_message_invalid')[0]).toMatchObject({
      reason: 'invalid_run_document',
      errorCode: 'FLOW_RUN_INVALID',
    });
  });

  it('a transient failure before the claim nacks, until the delivery bound: then it is acked and logged', async () => {
    const f = await fixture({ policy: { maxDeliveryAttempts: 3 } });
    f.store.failNextGets(1);
    await expect(
      f.harness.handleStepReady(f.message(OHLCV), { deliveryAttempt: 2 }),
    ).rejects.toThrow('store unavailable');
    f.store.failNextGets(1);
    const outcome = await f.harness.handleStepReady(f.message(OHLCV), { deliveryAttempt: 3 });
    expect(outcome).toEqual({ action: 'ack', kind: 'noop', reason: 'delivery_attempts_exhausted' });
    expect(f.log.withEvent('step_noop').at(-1)).toMatchObject({
      reason: 'delivery_attempts_exhausted',
      deliveryAttempt: 3,
      maxDeliveryAttempts: 3,
      errorCode: 'INTERNAL_ERROR',
    });
    expectNoSideEffects(f);
    // The step is still READY: the reconciler's republish brings it back with a fresh message.
    expect((await f.step(OHLCV)).status).toBe('READY');
  });
});
