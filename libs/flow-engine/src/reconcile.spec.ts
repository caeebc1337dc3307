import { describe, expect, it } from 'vitest';
import { applyPatch, FIELD_DELETE } from './patch';
import {
  artifactMissingDrift,
  effectiveMaxAttempts,
  expectedArtifacts,
  reconcileRun,
} from './reconcile';
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

  it('reports nothing as drift for a healthy run', () => {
    const run = makeRun(
      { a: { status: 'RUNNING', attempt: 1, lease: { owner: 'w', expiresAt: iso(100) } } },
      { status: 'RUNNING' },
    );
    const healthy = applyPatch(run, reconcileRun(run, options(0)).patch);
    expect(reconcileRun(healthy, options(60))).toMatchObject({ patch: {}, drift: [] });
  });

  it('lists every finding with its action: stale READY, expired leases, step timeout, lost advance', () => {
    const run = makeRun(
      {
        a: { status: 'READY', readyAt: iso(10) },
        b: { status: 'RUNNING', attempt: 1, lease: { owner: 'w1', expiresAt: iso(150) } },
        c: { status: 'RUNNING', attempt: 3, lease: { owner: 'w2', expiresAt: iso(150) } },
        d: {
          status: 'RUNNING',
          attempt: 1,
          deadlineAt: iso(100),
          lease: { owner: 'w3', expiresAt: iso(500) },
        },
        e: { status: 'SUCCEEDED', attempt: 1 },
        f: { dependsOn: ['e'] },
      },
      { status: 'RUNNING' },
    );
    const result = reconcileRun(run, { ...options(200), stepTimeoutGraceMs: 10_000 });
    expect(result.drift).toEqual([
      {
        kind: 'ready_unclaimed',
        action: 'republish',
        stepId: 'a',
        detail: { readyAt: iso(10), waitedMs: 190_000, attempt: 0 },
      },
      {
        kind: 'lease_expired',
        action: 'reclaim',
        stepId: 'b',
        detail: { attempt: 1, maxAttempts: 3, leaseOwner: 'w1', leaseExpiresAt: iso(150) },
      },
      {
        kind: 'lease_expired',
        action: 'fail_step',
        stepId: 'c',
        detail: {
          attempt: 3,
          maxAttempts: 3,
          leaseOwner: 'w2',
          leaseExpiresAt: iso(150),
          errorCode: 'LEASE_EXPIRED',
        },
      },
      {
        kind: 'step_timeout',
        action: 'fail_step',
        stepId: 'd',
        detail: {
          attempt: 1,
          leaseOwner: 'w3',
          leaseExpiresAt: iso(500),
          deadlineAt: iso(100),
          errorCode: 'STEP_TIMEOUT',
        },
      },
      {
        kind: 'advance_pending',
        action: 'advance',
        detail: { runStatus: 'RUNNING', newlyReady: ['f'] },
      },
    ]);
    expect(result).toMatchObject({ reclaimed: ['b'], failed: ['c', 'd'], timedOut: ['d'] });
    // one failure ends the run (lowest stepId: c, LEASE_EXPIRED) and cancels what waits
    const after = applyPatch(run, result.patch);
    expect(statusesOf(after)).toEqual({
      a: 'CANCELLED',
      b: 'CANCELLED',
      c: 'FAILED',
      d: 'FAILED',
      e: 'SUCCEEDED',
      f: 'CANCELLED',
    });
    expect(after.steps['d']?.error?.code).toBe('STEP_TIMEOUT');
    expect(result.republish).toEqual([]);
  });

  it('a run past its deadline is drift run_deadline / fail_run', () => {
    const run = makeRun(
      { a: { status: 'READY', readyAt: iso(90) } },
      { status: 'RUNNING', deadlineAt: iso(100) },
    );
    expect(reconcileRun(run, options(100)).drift).toEqual([
      {
        kind: 'run_deadline',
        action: 'fail_run',
        detail: { deadlineAt: iso(100), cancelsSteps: ['a'] },
      },
    ]);
  });

  it('a step timeout in a run that already ended closes the step as CANCELLED', () => {
    const run = makeRun(
      {
        a: {
          status: 'RUNNING',
          attempt: 1,
          deadlineAt: iso(10),
          lease: { owner: 'w', expiresAt: iso(500) },
        },
      },
      { status: 'CANCELLED', cancelRequestedAt: iso(5), finishedAt: iso(5) },
    );
    const result = reconcileRun(run, options(100));
    expect(result.cancelled).toEqual(['a']);
    expect(result.drift[0]).toMatchObject({ kind: 'step_timeout', action: 'cancel_step' });
    expect(applyPatch(run, result.patch).status).toBe('CANCELLED');
  });

  it('maxAttempts: the override, else what the claim recorded, else seed 004 (3)', () => {
    const expired = (attempt: number, maxAttempts?: number) =>
      makeRun(
        {
          a: {
            status: 'RUNNING',
            attempt,
            lease: { owner: 'w', expiresAt: iso(10) },
            ...(maxAttempts === undefined ? {} : { maxAttempts }),
          },
        },
        { status: 'RUNNING' },
      );
    const noOverride = { now: at(100), republishReadyAfterMs: 30_000 };
    expect(reconcileRun(expired(2), noOverride).reclaimed).toEqual(['a']);
    expect(reconcileRun(expired(3), noOverride).failed).toEqual(['a']);
    expect(reconcileRun(expired(3, 5), noOverride).reclaimed).toEqual(['a']);
    expect(reconcileRun(expired(2, 2), noOverride).failed).toEqual(['a']);
    expect(reconcileRun(expired(3, 5), { ...noOverride, maxAttempts: 3 }).failed).toEqual(['a']);
    expect(effectiveMaxAttempts({ stepType: 'LLM_REPORT' })).toBe(3);
    expect(effectiveMaxAttempts({ stepType: 'LLM_REPORT', maxAttempts: 0 })).toBe(3);
    expect(() => reconcileRun(expired(1), { ...noOverride, maxAttempts: 0 })).toThrow(
      /maxAttempts/,
    );
  });

  it('a reclaim drops the attempt deadline so the next claim records its own', () => {
    const run = makeRun(
      {
        a: {
          status: 'RUNNING',
          attempt: 1,
          deadlineAt: iso(100),
          lease: { owner: 'w', expiresAt: iso(50) },
        },
      },
      { status: 'RUNNING' },
    );
    const result = reconcileRun(run, options(60));
    expect(result.patch).toMatchObject({ 'steps.a.deadlineAt': FIELD_DELETE });
    expect(applyPatch(run, result.patch).steps['a']?.deadlineAt).toBeUndefined();
  });

  it("lists the artifacts SUCCEEDED steps should have (the existence check is the caller's I/O)", () => {
    const run = makeRun({
      a: { status: 'SUCCEEDED', outputs: { gcs_uri: 'gs://b/runs/x/1d/a.json' } },
      b: { status: 'SUCCEEDED' },
      c: { status: 'RUNNING' },
    });
    const expected = expectedArtifacts(run);
    expect(expected).toEqual([
      { stepId: 'a', stepType: 'OHLCV_EXPORT', uri: 'gs://b/runs/x/1d/a.json' },
      { stepId: 'b', stepType: 'OHLCV_EXPORT' },
    ]);
    const missing = expected[1];
    if (missing === undefined) throw new Error('expected two SUCCEEDED steps');
    expect(artifactMissingDrift(missing, 'no_uri')).toEqual({
      kind: 'artifact_missing',
      action: 'report_only',
      stepId: 'b',
      detail: { reason: 'no_uri', stepType: 'OHLCV_EXPORT', uri: null },
    });
  });
});
