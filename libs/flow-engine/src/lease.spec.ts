import { describe, expect, it } from 'vitest';
import { decideHeartbeat, decideLeaseExpiry, holdsStepLease } from './lease';
import { FIELD_DELETE } from './patch';
import { at, iso, makeRun } from './testing/run-fixtures';

const running = (overrides = {}) =>
  makeRun(
    { s: { status: 'RUNNING', attempt: 1, lease: { owner: 'w1', expiresAt: iso(60) } } },
    { status: 'RUNNING', ...overrides },
  );

describe('decideHeartbeat', () => {
  const opts = { now: at(30), owner: 'w1', leaseMs: 60_000 };

  it('extends the lease and records progress', () => {
    const decision = decideHeartbeat(running(), 's', {
      ...opts,
      progress: { stage: 'stage_a', processedUnits: 3, totalUnits: 10 },
    });
    expect(decision).toEqual({
      kind: 'extend',
      stepId: 's',
      leaseExpiresAt: iso(90),
      patch: {
        'steps.s.lease.expiresAt': iso(90),
        'steps.s.progress': {
          stage: 'stage_a',
          processedUnits: 3,
          totalUnits: 10,
          updatedAt: iso(30),
        },
      },
    });
  });

  it('signals lease_lost when the step is not ours any more', () => {
    expect(decideHeartbeat(running(), 's', { ...opts, owner: 'w2' })).toMatchObject({
      kind: 'lease_lost',
      reason: 'owner_mismatch',
      leaseOwner: 'w1',
    });
    const done = makeRun({ s: { status: 'SUCCEEDED' } }, { status: 'RUNNING' });
    expect(decideHeartbeat(done, 's', opts)).toMatchObject({
      kind: 'lease_lost',
      reason: 'not_running',
      status: 'SUCCEEDED',
    });
    expect(decideHeartbeat(done, 'x', opts)).toMatchObject({
      kind: 'lease_lost',
      reason: 'unknown_step',
    });
  });

  it('signals cancel_requested on cancel, a finished run or a passed deadline', () => {
    expect(decideHeartbeat(running({ cancelRequestedAt: iso(10) }), 's', opts)).toMatchObject({
      kind: 'cancel_requested',
      cause: 'cancel_requested',
    });
    expect(decideHeartbeat(running({ status: 'CANCELLED' }), 's', opts)).toMatchObject({
      cause: 'cancel_requested',
    });
    expect(decideHeartbeat(running({ status: 'FAILED' }), 's', opts)).toMatchObject({
      kind: 'cancel_requested',
      cause: 'run_finished',
      runStatus: 'FAILED',
    });
    expect(decideHeartbeat(running({ deadlineAt: iso(30) }), 's', opts)).toMatchObject({
      cause: 'deadline_passed',
    });
  });
});

describe('decideLeaseExpiry', () => {
  it('does nothing while the lease is valid', () => {
    expect(decideLeaseExpiry(running(), 's', { now: at(59), maxAttempts: 3 })).toMatchObject({
      kind: 'none',
      reason: 'lease_valid',
    });
  });

  it('returns an expired step to READY while attempts remain', () => {
    const decision = decideLeaseExpiry(running(), 's', { now: at(60), maxAttempts: 3 });
    expect(decision).toMatchObject({
      kind: 'reclaim',
      patch: {
        'steps.s.status': 'READY',
        'steps.s.readyAt': iso(60),
        'steps.s.lease': FIELD_DELETE,
        'steps.s.error': { code: 'LEASE_EXPIRED' },
      },
    });
  });

  it('fails the step with LEASE_EXPIRED on its last attempt', () => {
    const run = running();
    const step = run.steps['s'];
    if (step) step.attempt = 3;
    expect(decideLeaseExpiry(run, 's', { now: at(61), maxAttempts: 3 })).toMatchObject({
      kind: 'fail',
      error: { code: 'LEASE_EXPIRED', details: { attempt: 3, maxAttempts: 3 } },
      patch: { 'steps.s.status': 'FAILED' },
    });
  });

  it('cancels an abandoned step of a finished run', () => {
    expect(
      decideLeaseExpiry(running({ status: 'CANCELLED' }), 's', { now: at(61), maxAttempts: 3 }),
    ).toMatchObject({
      kind: 'cancel',
      patch: { 'steps.s.status': 'CANCELLED' },
    });
  });

  it('ignores steps that are not RUNNING', () => {
    expect(
      decideLeaseExpiry(makeRun({ s: { status: 'READY' } }), 's', { now: at(1), maxAttempts: 3 }),
    ).toMatchObject({
      kind: 'none',
      reason: 'not_running',
    });
    expect(() => decideLeaseExpiry(running(), 's', { now: at(1), maxAttempts: 0 })).toThrow();
  });
});

describe('holdsStepLease', () => {
  const holder = { owner: 'w1', attempt: 1, now: at(30) };

  it('holds while the step runs under the same claim, owner and an unexpired lease', () => {
    expect(holdsStepLease(running(), 's', holder)).toBe(true);
    // A cancel request does not revoke it: the step stops at its next batch boundary.
    expect(holdsStepLease(running({ cancelRequestedAt: iso(10) }), 's', holder)).toBe(true);
  });

  it('is lost to another owner, another claim, an expired lease or a finished step', () => {
    expect(holdsStepLease(running(), 's', { ...holder, owner: 'w2' })).toBe(false);
    expect(holdsStepLease(running(), 's', { ...holder, attempt: 2 })).toBe(false);
    expect(holdsStepLease(running(), 's', { ...holder, now: at(60) })).toBe(false);
    expect(holdsStepLease(running(), 'missing', holder)).toBe(false);
    const done = makeRun({ s: { status: 'SUCCEEDED', attempt: 1 } }, { status: 'SUCCEEDED' });
    expect(holdsStepLease(done, 's', holder)).toBe(false);
  });
});
