import { validate } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import { decideClaim } from './claim';
import { InvalidRequestError } from './errors';
import { applyPatch, FIELD_DELETE } from './patch';
import { at, iso, makeRun } from './testing/run-fixtures';

const NOW = at(30);
const options = { now: NOW, owner: 'worker-a', leaseMs: 60_000, stepType: 'OHLCV_EXPORT' as const };

describe('decideClaim', () => {
  it('claims a READY step: RUNNING, attempt + 1, lease, timing.startedAt', () => {
    const run = makeRun(
      { 'ohlcv_export:1d': { status: 'READY', timeframe: '1d' } },
      { status: 'RUNNING' },
    );
    const decision = decideClaim(run, 'ohlcv_export:1d', options);
    expect(decision).toEqual({
      kind: 'claim',
      stepId: 'ohlcv_export:1d',
      attempt: 1,
      lease: { owner: 'worker-a', expiresAt: at(90).toISOString() },
      startedAt: NOW.toISOString(),
      runDeadlinePassed: false,
      patch: {
        'steps.ohlcv_export:1d.status': 'RUNNING',
        'steps.ohlcv_export:1d.attempt': 1,
        'steps.ohlcv_export:1d.lease': { owner: 'worker-a', expiresAt: at(90).toISOString() },
        'steps.ohlcv_export:1d.outputs.execution.timing.startedAt': NOW.toISOString(),
      },
    });
    if (decision.kind !== 'claim') return;
    const claimed = applyPatch(run, decision.patch);
    expect(validate.flowRun(claimed).ok).toBe(true);
    // a second delivery of the same message is a no-op
    expect(decideClaim(claimed, 'ohlcv_export:1d', { ...options, owner: 'worker-b' })).toEqual({
      kind: 'noop',
      stepId: 'ohlcv_export:1d',
      reason: { kind: 'already_running', attempt: 1, leaseOwner: 'worker-a' },
    });
  });

  it('clears what a previous attempt left behind', () => {
    const run = makeRun(
      {
        s: {
          status: 'READY',
          attempt: 1,
          error: { code: 'LEASE_EXPIRED', message: 'lost', retryable: true },
          finishedAt: iso(1),
          progress: { stage: 'x', updatedAt: iso(1) },
          outputs: { execution: { timing: { startedAt: iso(0), durationMs: 5 } } },
        },
      },
      { status: 'RUNNING' },
    );
    const decision = decideClaim(run, 's', options);
    expect(decision.kind).toBe('claim');
    if (decision.kind !== 'claim') return;
    expect(decision.attempt).toBe(2);
    expect(decision.patch).toMatchObject({
      'steps.s.error': FIELD_DELETE,
      'steps.s.finishedAt': FIELD_DELETE,
      'steps.s.progress': FIELD_DELETE,
      'steps.s.outputs.execution.timing': { startedAt: NOW.toISOString() },
    });
    const claimed = applyPatch(run, decision.patch);
    expect(claimed.steps['s']?.error).toBeUndefined();
    expect(claimed.steps['s']?.outputs.execution?.timing).toEqual({ startedAt: NOW.toISOString() });
  });

  it('is a no-op with a reason when the step is not executable', () => {
    const run = makeRun(
      { a: { status: 'RUNNING' }, b: { status: 'READY', dependsOn: ['a'] }, c: {} },
      { status: 'RUNNING' },
    );
    expect(decideClaim(run, 'b', options)).toMatchObject({
      kind: 'noop',
      reason: { kind: 'unmet_dependencies', dependencies: [{ stepId: 'a', status: 'RUNNING' }] },
    });
    expect(decideClaim(run, 'c', options)).toMatchObject({
      kind: 'noop',
      reason: { kind: 'not_ready', status: 'PENDING' },
    });
    expect(decideClaim(run, 'zz', options)).toMatchObject({
      kind: 'noop',
      reason: { kind: 'unknown_step' },
    });
    expect(decideClaim({ ...run, status: 'CANCELLED' }, 'b', options)).toMatchObject({
      kind: 'noop',
      reason: { kind: 'run_not_running', runStatus: 'CANCELLED' },
    });
    expect(decideClaim(run, 'c', { ...options, stepType: 'LLM_REPORT' })).toMatchObject({
      kind: 'noop',
      reason: { kind: 'step_type_mismatch' },
    });
  });

  it('refuses an unsafe stepId with FLOW_RUN_INVALID and no patch', () => {
    const run = makeRun({ 'a.b': { status: 'READY' } }, { status: 'RUNNING' });
    const decision = decideClaim(run, 'a.b', options);
    expect(decision).toMatchObject({
      kind: 'invalid',
      error: { code: 'FLOW_RUN_INVALID', details: { stepId: 'a.b' } },
    });
    expect(decision).not.toHaveProperty('patch');
  });

  it('fails a step with an unknown dependency as INVALID_STEP_INPUTS (non-retryable)', () => {
    const run = makeRun({ s: { status: 'READY', dependsOn: ['ghost'] } }, { status: 'RUNNING' });
    const decision = decideClaim(run, 's', options);
    expect(decision).toMatchObject({
      kind: 'invalid',
      error: {
        code: 'INVALID_STEP_INPUTS',
        retryable: false,
        details: { stepId: 's', unknownDependencies: ['ghost'] },
      },
      patch: { 'steps.s.status': 'FAILED', 'steps.s.finishedAt': NOW.toISOString() },
    });
  });

  it('rejects a blank owner or a non-positive lease', () => {
    const run = makeRun({ s: { status: 'READY' } }, { status: 'RUNNING' });
    expect(() => decideClaim(run, 's', { ...options, owner: ' ' })).toThrow(InvalidRequestError);
    expect(() => decideClaim(run, 's', { ...options, leaseMs: 0 })).toThrow(InvalidRequestError);
  });

  it('carries the run deadline rule: the parsed deadline, and whether it already passed', () => {
    const ready = { 'ohlcv_export:1d': { status: 'READY' as const } };
    const claim = (deadlineAt?: string) => {
      const run = makeRun(ready, {
        status: 'RUNNING',
        ...(deadlineAt === undefined ? {} : { deadlineAt }),
      });
      const decision = decideClaim(run, 'ohlcv_export:1d', options);
      if (decision.kind !== 'claim') throw new Error(decision.kind);
      return { runDeadlineMs: decision.runDeadlineMs, passed: decision.runDeadlinePassed };
    };
    expect(claim()).toEqual({ runDeadlineMs: undefined, passed: false });
    expect(claim(iso(60))).toEqual({ runDeadlineMs: at(60).getTime(), passed: false });
    // at or before now: the step is claimed, and its worker finalizes it CANCELLED at once
    expect(claim(iso(30))).toEqual({ runDeadlineMs: NOW.getTime(), passed: true });
    expect(claim(iso(1))).toEqual({ runDeadlineMs: at(1).getTime(), passed: true });
  });

  it('records the worker policy: deadlineAt = now + timeoutMs and maxAttempts', () => {
    const run = makeRun({ s: { status: 'READY', deadlineAt: iso(-50) } }, { status: 'RUNNING' });
    const decision = decideClaim(run, 's', { ...options, timeoutMs: 120_000, maxAttempts: 3 });
    if (decision.kind !== 'claim') throw new Error('expected a claim');
    expect(applyPatch(run, decision.patch).steps['s']).toMatchObject({
      deadlineAt: new Date(options.now.getTime() + 120_000).toISOString(),
      maxAttempts: 3,
    });
    // without a timeout, a deadline left by an earlier attempt is removed
    const bare = decideClaim(run, 's', options);
    if (bare.kind !== 'claim') throw new Error('expected a claim');
    expect(bare.patch['steps.s.deadlineAt']).toBe(FIELD_DELETE);
    expect(bare.patch['steps.s.maxAttempts']).toBeUndefined();
    expect(() => decideClaim(run, 's', { ...options, timeoutMs: 0 })).toThrow(/timeoutMs/);
    expect(() => decideClaim(run, 's', { ...options, maxAttempts: 0 })).toThrow(/maxAttempts/);
  });
});
