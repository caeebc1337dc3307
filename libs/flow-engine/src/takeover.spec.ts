import type { FlowRun } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import { applyPatch, stepPath } from './patch';
import { decideTakeover, decideTakeoverFinalize, takeoverEligibility } from './takeover';
import { makeRun, type StepOverrides } from './testing/run-fixtures';

const STEP = 'ohlcv_export:1d';
const NOW = new Date('2026-01-15T10:00:10.000Z');

function runWith(step: StepOverrides): FlowRun {
  return makeRun({ [STEP]: { timeframe: '1d', ...step } }, { status: 'RUNNING' });
}

function running(
  owner: string | undefined,
  expiresAt = '2026-01-15T10:01:00.000Z',
  attempt = 1,
): FlowRun {
  return runWith({
    status: 'RUNNING',
    attempt,
    ...(owner === undefined ? {} : { lease: { owner, expiresAt } }),
    error: { code: 'LEASE_EXPIRED', message: 'old', retryable: true },
    progress: { stage: 'x', updatedAt: '2026-01-15T10:00:02.000Z' },
    outputs: { execution: { timing: { startedAt: '2026-01-15T10:00:01.000Z' } } },
  });
}

describe('takeoverEligibility', () => {
  it('a live lease of another worker is held', () => {
    expect(takeoverEligibility(running('other'), STEP, { now: NOW, owner: 'me' })).toEqual({
      eligible: false,
      reason: 'lease_held',
      leaseOwner: 'other',
      leaseExpiresAt: '2026-01-15T10:01:00.000Z',
    });
  });

  it('an expired, missing or own lease can be taken over', () => {
    const expired = running('other', NOW.toISOString());
    expect(takeoverEligibility(expired, STEP, { now: NOW, owner: 'me' })).toMatchObject({
      eligible: true,
      why: 'lease_expired',
    });
    expect(takeoverEligibility(running(undefined), STEP, { now: NOW, owner: 'me' })).toMatchObject({
      eligible: true,
      why: 'lease_expired',
    });
    expect(takeoverEligibility(running('me'), STEP, { now: NOW, owner: 'me' })).toMatchObject({
      eligible: true,
      why: 'own_orphan',
    });
  });

  it('only RUNNING steps', () => {
    expect(
      takeoverEligibility(runWith({ status: 'READY' }), STEP, { now: NOW, owner: 'me' }),
    ).toEqual({
      eligible: false,
      reason: 'not_running',
    });
    expect(
      takeoverEligibility(runWith({ status: 'READY' }), 'nope:1d', { now: NOW, owner: 'me' }),
    ).toEqual({
      eligible: false,
      reason: 'unknown_step',
    });
  });
});

describe('decideTakeover', () => {
  it('writes what a claim writes: attempt + 1, our lease, fresh timing, old error/progress removed', () => {
    const decision = decideTakeover(running('me'), STEP, {
      now: NOW,
      owner: 'me',
      leaseMs: 60_000,
    });
    expect(decision).toMatchObject({ kind: 'claim', attempt: 2, why: 'own_orphan' });
    if (decision.kind !== 'claim') throw new Error('expected a takeover');
    const after = applyPatch(running('me'), decision.patch).steps[STEP];
    expect(after).toMatchObject({
      status: 'RUNNING',
      attempt: 2,
      lease: { owner: 'me', expiresAt: '2026-01-15T10:01:10.000Z' },
      outputs: { execution: { timing: { startedAt: NOW.toISOString() } } },
    });
    expect(after?.error).toBeUndefined();
    expect(after?.progress).toBeUndefined();
  });

  it('records the policy like a claim and refuses a step already at maxAttempts', () => {
    const options = { now: NOW, owner: 'me', leaseMs: 60_000, timeoutMs: 5_000, maxAttempts: 3 };
    const decision = decideTakeover(running('me', undefined, 2), STEP, options);
    if (decision.kind !== 'claim') throw new Error('expected a takeover');
    expect(applyPatch(running('me', undefined, 2), decision.patch).steps[STEP]).toMatchObject({
      attempt: 3,
      deadlineAt: '2026-01-15T10:00:15.000Z',
      maxAttempts: 3,
    });
    expect(decideTakeover(running('me', undefined, 3), STEP, options)).toEqual({
      kind: 'noop',
      stepId: STEP,
      reason: 'attempts_exhausted',
    });
    // without a bound the takeover is not limited here (the redelivery bound still applies)
    const { maxAttempts: _bound, ...unbounded } = options;
    expect(decideTakeover(running('me', undefined, 3), STEP, unbounded)).toMatchObject({
      kind: 'claim',
      attempt: 4,
    });
  });

  it('is a noop for a held lease or a run that stopped running', () => {
    expect(decideTakeover(running('other'), STEP, { now: NOW, owner: 'me', leaseMs: 1 })).toEqual({
      kind: 'noop',
      stepId: STEP,
      reason: 'lease_held',
    });
    const cancelled = { ...running('me'), cancelRequestedAt: '2026-01-15T10:00:05.000Z' };
    expect(decideTakeover(cancelled, STEP, { now: NOW, owner: 'me', leaseMs: 1 })).toMatchObject({
      kind: 'noop',
      reason: 'cancel_requested',
    });
  });
});

describe('decideTakeoverFinalize', () => {
  const outcome = { status: 'SUCCEEDED' as const, gcsUri: 'gs://bkt/runs/x.json' };

  it('finalizes an expired lease of another worker in one patch, lease removed, attempt kept', () => {
    const run = running('dead', '2026-01-15T10:00:00.000Z');
    const decision = decideTakeoverFinalize(run, STEP, { now: NOW, owner: 'me', outcome });
    expect(decision.kind).toBe('finalize');
    if (decision.kind !== 'finalize') throw new Error('expected a finalize');
    expect(decision.patch[stepPath(STEP, 'attempt')]).toBeUndefined();
    const after = applyPatch(run, decision.patch).steps[STEP];
    expect(after).toMatchObject({
      status: 'SUCCEEDED',
      attempt: 1,
      outputs: { gcs_uri: 'gs://bkt/runs/x.json' },
    });
    expect(after?.lease).toBeUndefined();
  });

  it('refuses a live lease of another worker and a finished step', () => {
    expect(
      decideTakeoverFinalize(running('other'), STEP, { now: NOW, owner: 'me', outcome }),
    ).toMatchObject({ kind: 'noop', reason: { kind: 'lease_lost', leaseOwner: 'other' } });
    const done = runWith({ status: 'SUCCEEDED', attempt: 1 });
    expect(decideTakeoverFinalize(done, STEP, { now: NOW, owner: 'me', outcome })).toMatchObject({
      kind: 'noop',
      reason: { kind: 'already_final', status: 'SUCCEEDED' },
    });
  });
});
