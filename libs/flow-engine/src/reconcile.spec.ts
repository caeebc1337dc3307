import { describe, expect, it } from 'vitest';
import { applyPatch } from './patch';
import { reconcileRun } from './reconcile';
import { at, iso, makeRun, statusesOf } from './testing/run-fixtures';

const options = (seconds: number) => ({
  now: at(seconds),
  maxAttempts: 3,
  republishReadyAfterMs: 30_000,
});

describe('reconcileRun', () => {
  it('does nothing for a healthy run', () => {
    const run = makeRun(
      {
        a: { status: 'RUNNING', attempt: 1, lease: { owner: 'w', expiresAt: iso(100) } },
        b: { status: 'READY', readyAt: iso(50) },
      },
      {
        status: 'RUNNING',
        progress: {
          total: 2,
          pending: 0,
          ready: 1,
          running: 1,
          succeeded: 0,
          failed: 0,
          skipped: 0,
          cancelled: 0,
        },
      },
    );
    expect(reconcileRun(run, options(60))).toMatchObject({
      patch: {},
      republish: [],
      reclaimed: [],
      failed: [],
    });
  });

  it('republishes stale READY steps and reclaims expired leases in one patch', () => {
    const run = makeRun(
      {
        a: { status: 'RUNNING', attempt: 1, lease: { owner: 'w', expiresAt: iso(100) } },
        b: { status: 'READY', readyAt: iso(10) },
        c: { status: 'READY', readyAt: iso(190) },
      },
      { status: 'RUNNING' },
    );
    const result = reconcileRun(run, options(200));
    expect(result.reclaimed).toEqual(['a']);
    expect(result.republish).toEqual(['a', 'b']);
    const next = applyPatch(run, result.patch);
    expect(statusesOf(next)).toEqual({ a: 'READY', b: 'READY', c: 'READY' });
    expect(next.steps['a']?.lease).toBeUndefined();
  });

  it('fails an exhausted step and applies the failure policy in the same patch', () => {
    const run = makeRun(
      {
        a: { status: 'RUNNING', attempt: 3, lease: { owner: 'w', expiresAt: iso(100) } },
        b: { dependsOn: ['a'] },
      },
      { status: 'RUNNING' },
    );
    const result = reconcileRun(run, options(200));
    expect(result.failed).toEqual(['a']);
    expect(result.advance.runStatus).toBe('FAILED');
    expect(result.advance.runError).toMatchObject({
      code: 'LEASE_EXPIRED',
      details: { stepId: 'a' },
    });
    expect(statusesOf(applyPatch(run, result.patch))).toEqual({ a: 'FAILED', b: 'CANCELLED' });
  });

  it('fails a run past its deadline', () => {
    const run = makeRun(
      { a: { status: 'READY', readyAt: iso(0) } },
      { status: 'RUNNING', deadlineAt: iso(100) },
    );
    const result = reconcileRun(run, options(100));
    expect(result.advance.runError).toMatchObject({ code: 'RUN_TIMEOUT' });
    expect(result.republish).toEqual([]);
  });
});
