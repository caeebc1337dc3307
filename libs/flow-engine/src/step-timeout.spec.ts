import { describe, expect, it } from 'vitest';
import { applyPatch, FIELD_DELETE } from './patch';
import { decideStepTimeout } from './step-timeout';
import { at, iso, makeRun, type StepOverrides } from './testing/run-fixtures';

/** A step claimed at t=0 with a 100 s deadline and a lease until `leaseUntil` seconds. */
const running = (leaseUntil: number | undefined, step: StepOverrides = {}, runOverrides = {}) =>
  makeRun(
    {
      s: {
        status: 'RUNNING',
        attempt: 1,
        deadlineAt: iso(100),
        ...(leaseUntil === undefined ? {} : { lease: { owner: 'w1', expiresAt: iso(leaseUntil) } }),
        ...step,
      },
    },
    { status: 'RUNNING', ...runOverrides },
  );

describe('decideStepTimeout', () => {
  it('waits the grace while the worker still holds the lease, then fails STEP_TIMEOUT', () => {
    const run = running(160);
    expect(decideStepTimeout(run, 's', { now: at(100), graceMs: 15_000 })).toMatchObject({
      kind: 'none',
      reason: 'within_deadline',
    });
    expect(decideStepTimeout(run, 's', { now: at(114), graceMs: 15_000 }).kind).toBe('none');
    const decision = decideStepTimeout(run, 's', { now: at(115), graceMs: 15_000 });
    expect(decision).toMatchObject({
      kind: 'timeout',
      error: {
        code: 'STEP_TIMEOUT',
        retryable: false,
        details: { stepId: 's', attempt: 1, deadlineAt: iso(100), leaseOwner: 'w1' },
      },
      patch: {
        'steps.s.status': 'FAILED',
        'steps.s.finishedAt': iso(115),
        'steps.s.lease': FIELD_DELETE,
      },
    });
    if (decision.kind !== 'timeout') throw new Error('expected a timeout');
    const after = applyPatch(run, decision.patch).steps['s'];
    expect(after).toMatchObject({ status: 'FAILED', error: { code: 'STEP_TIMEOUT' } });
    expect(after?.lease).toBeUndefined();
  });

  it('a lease that ends by deadline + grace is a dead worker (lease rules); one past it a timeout', () => {
    // heartbeated past deadline + grace, then vanished: a timeout, whenever the reconciler looks
    for (const now of [116, 130, 500]) {
      expect(decideStepTimeout(running(120), 's', { now: at(now), graceMs: 15_000 }).kind).toBe(
        'timeout',
      );
    }
    // the lease ends by deadline + grace: never a timeout, before or after it lapsed
    for (const leaseUntil of [90, 105, 115]) {
      for (const now of [50, 116, 500]) {
        expect(
          decideStepTimeout(running(leaseUntil), 's', { now: at(now), graceMs: 15_000 }),
        ).toMatchObject({ kind: 'none', reason: 'lease_expired_first' });
      }
    }
    expect(decideStepTimeout(running(undefined), 's', { now: at(200) })).toMatchObject({
      kind: 'none',
      reason: 'lease_expired_first',
    });
  });

  it('closes an overrunning step of a finished or cancel-requested run as CANCELLED', () => {
    for (const run of [
      running(500, {}, { status: 'FAILED' }),
      running(500, {}, { cancelRequestedAt: iso(50) }),
    ]) {
      expect(decideStepTimeout(run, 's', { now: at(200) })).toMatchObject({
        kind: 'cancel',
        error: { code: 'CANCELLED' },
        patch: { 'steps.s.status': 'CANCELLED' },
      });
    }
  });

  it('ignores steps without a deadline, not RUNNING or unknown; refuses a negative grace', () => {
    expect(
      decideStepTimeout(running(500, { deadlineAt: undefined }), 's', { now: at(999) }),
    ).toMatchObject({ kind: 'none', reason: 'no_deadline' });
    expect(
      decideStepTimeout(running(500, { status: 'SUCCEEDED' }), 's', { now: at(999) }),
    ).toMatchObject({ kind: 'none', reason: 'not_running' });
    expect(decideStepTimeout(running(500), 'x', { now: at(999) })).toMatchObject({
      kind: 'none',
      reason: 'unknown_step',
    });
    expect(() => decideStepTimeout(running(500), 's', { now: at(1), graceMs: -1 })).toThrow(
      /graceMs/,
    );
  });
});
