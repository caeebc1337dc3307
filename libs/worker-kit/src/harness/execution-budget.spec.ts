import type { FlowStep } from '@tda/contracts';
import { requestCancel } from '@tda/flow-engine';
import { makeFlowRun } from '@tda/flow-store/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HarnessShutdownError } from '../harness.errors';
import type { StepAbortReason } from '../step-handler';
import { jsonResult, TestStepHandler, untilAborted } from '../testing';
import { deferred, first, harnessFixtures, OHLCV, T0 } from '../testing/harness-fixture';

const fixture = harnessFixtures();

/**
 * The harness's timers (step and run deadlines, heartbeats) run on fake time here: the tests
 * advance the clock instead of waiting. The in-memory adapters' own turns (setImmediate) stay real.
 */
function fakeTimers(): void {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
}
afterEach(() => {
  vi.useRealTimers();
});

/** Runs `work` while advancing fake time in `stepMs` increments until it settles. */
async function settleWithTime<T>(work: Promise<T>, stepMs: number, maxMs = 10_000): Promise<T> {
  let settled = false;
  const watched = work.finally(() => {
    settled = true;
  });
  for (let elapsed = 0; !settled && elapsed < maxMs; elapsed += stepMs) {
    await vi.advanceTimersByTimeAsync(stepMs);
  }
  return watched;
}

describe('StepHarness — deadline, cancel, lease loss, shutdown', () => {
  it('deadline → signal aborted, FAILED STEP_TIMEOUT (even if the handler ignores the signal)', async () => {
    fakeTimers();
    const handler = new TestStepHandler();
    handler.executeImpl = () => new Promise(() => undefined);
    const f = await fixture({ handler, policy: { timeoutMs: 40 } });
    const outcome = await settleWithTime(f.harness.handleStepReady(f.message(OHLCV), first), 10);
    expect(outcome).toMatchObject({ kind: 'failed', status: 'FAILED', errorCode: 'STEP_TIMEOUT' });
    expect(handler.signals[0]?.aborted).toBe(true);
    expect(handler.signals[0]?.reason).toEqual({ kind: 'deadline' } satisfies StepAbortReason);
    expect(f.artifacts.puts).toBe(0);
    expect(f.store.statusWrites(OHLCV)).toEqual(['RUNNING', 'FAILED']);
  });

  it('cancel requested during execution → signal aborted, step CANCELLED', async () => {
    fakeTimers();
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
    // the next heartbeat sees the cancel
    const outcome = await settleWithTime(pending, 15);

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
    fakeTimers();
    const handler = new TestStepHandler();
    handler.executeImpl = (ctx) => untilAborted(ctx.signal);
    // heartbeats far apart: only the harness's own run-deadline timer can stop the handler
    const run = makeFlowRun({ deadlineAt: new Date(T0 + 60).toISOString() });
    const f = await fixture({ handler, run, policy: { heartbeatMs: 30_000 } });
    const outcome = await settleWithTime(f.harness.handleStepReady(f.message(OHLCV), first), 20);

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
    fakeTimers();
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
    // the next heartbeat sees another owner
    const outcome = await settleWithTime(pending, 15);

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

  it('heartbeats extend the lease once per period and carry only the latest progress', async () => {
    fakeTimers();
    const heartbeatMs = 30;
    const handler = new TestStepHandler();
    const release = deferred();
    const started = deferred();
    handler.executeImpl = async (ctx) => {
      started.resolve();
      ctx.heartbeat({ stage: 'download' });
      ctx.heartbeat({ stage: 'resample', processedUnits: 1, totalUnits: 3 });
      ctx.heartbeat({ stage: 'resample', processedUnits: 3, totalUnits: 3 });
      await release.promise;
      return jsonResult(ctx);
    };
    const f = await fixture({ handler, policy: { heartbeatMs } });
    const pending = f.harness.handleStepReady(f.message(OHLCV), first);
    await started.promise;
    // four periods pass while the handler works (each beat's write settles before the next
    // period, the store answering on its own turn): four beats, never two in one period
    for (let period = 0; period < 4; period += 1) {
      await vi.advanceTimersByTimeAsync(heartbeatMs);
      for (let turn = 0; turn < 5; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    }
    release.resolve();
    await settleWithTime(pending, heartbeatMs);

    const beats = f.store.recorded.filter(
      (u) => u.ok && `steps.${OHLCV}.lease.expiresAt` in u.patch,
    );
    expect(beats).toHaveLength(4);
    for (let i = 1; i < beats.length; i += 1) {
      expect((beats[i]?.at ?? 0) - (beats[i - 1]?.at ?? 0)).toBeGreaterThanOrEqual(heartbeatMs);
    }
    expect(beats[0]?.patch[`steps.${OHLCV}.progress`]).toMatchObject({
      stage: 'resample',
      processedUnits: 3,
      totalUnits: 3,
    });
    // Later beats had no new progress: lease only.
    for (const beat of beats.slice(1)) expect(`steps.${OHLCV}.progress` in beat.patch).toBe(false);
    expect((await f.step(OHLCV)).status).toBe('SUCCEEDED');
    // The finalize starts from the run as the last heartbeat wrote it: no refused write, and
    // no read besides the claim's and each heartbeat's.
    expect(f.store.recorded.filter((u) => !u.ok)).toHaveLength(0);
    expect(f.store.gets).toBe(1 + beats.length);
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
