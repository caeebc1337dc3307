import { at, iso, makeRun } from '@tda/flow-engine/testing';
import { describe, expect, it } from 'vitest';
import { reconcileDecision, reconcileOptions } from './reconcile.decision';

const options = reconcileOptions(
  {
    TDA_READY_REPUBLISH_AFTER_MS: 30_000,
    TDA_STEP_TIMEOUT_GRACE_MS: 0,
    TDA_MAX_STEP_ATTEMPTS: 3,
  },
  at(200),
);

describe('reconcileDecision', () => {
  it('republishes stale READY and reclaimed steps as `reconcile`, newly READY ones as `advance`', () => {
    const run = makeRun(
      {
        a: { status: 'RUNNING', attempt: 1, lease: { owner: 'w', expiresAt: iso(100) } },
        b: { status: 'READY', readyAt: iso(10) },
        c: { status: 'SUCCEEDED' },
        d: { dependsOn: ['c'] },
      },
      { status: 'RUNNING' },
    );

    const decision = reconcileDecision(run, options, 'active');

    expect(decision.kind === 'write' && decision.advance).toBe(decision.result.decision.advance);
    expect(decision.result.readStatus).toBe('RUNNING');
    expect(decision.dispatch).toEqual([
      { stepId: 'a', reason: 'reconcile' },
      { stepId: 'b', reason: 'reconcile' },
      { stepId: 'd', reason: 'advance' },
    ]);
  });

  it('closes a dead worker step of an ended run without an advance to log', () => {
    const run = makeRun(
      { a: { status: 'RUNNING', attempt: 1, lease: { owner: 'w', expiresAt: iso(100) } } },
      { status: 'CANCELLED', cancelRequestedAt: iso(50) },
    );

    const decision = reconcileDecision(run, options, 'ended');

    expect(decision).toMatchObject({ kind: 'write', patch: { 'steps.a.status': 'CANCELLED' } });
    expect(decision).not.toHaveProperty('advance');
    expect(decision.dispatch).toEqual([]);
  });
});
