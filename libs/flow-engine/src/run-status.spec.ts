import type { StepStatus } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import {
  computeProgress,
  deriveRunStatus,
  isTerminalRunStatus,
  isTerminalStepStatus,
  sameProgress,
} from './run-status';
import { at, iso, makeRun } from './testing/run-fixtures';

describe('computeProgress', () => {
  it('counts steps by status', () => {
    const run = makeRun({
      a: { status: 'SUCCEEDED' },
      b: { status: 'RUNNING' },
      c: { status: 'READY' },
      d: { status: 'PENDING' },
      e: { status: 'PENDING' },
      f: { status: 'FAILED' },
      g: { status: 'SKIPPED' },
      h: { status: 'CANCELLED' },
    });
    expect(computeProgress(run)).toEqual({
      total: 8,
      pending: 2,
      ready: 1,
      running: 1,
      succeeded: 1,
      failed: 1,
      skipped: 1,
      cancelled: 1,
      currentStepId: 'b',
    });
  });

  it('compares the counters and the current step', () => {
    const progress = computeProgress(makeRun({ a: {} }));
    expect(progress.currentStepId).toBeUndefined();
    expect(sameProgress({ ...progress }, progress)).toBe(true);
    expect(sameProgress({ ...progress, currentStepId: 'a' }, progress)).toBe(false);
    expect(sameProgress({ ...progress, pending: 0 }, progress)).toBe(false);
    expect(sameProgress(undefined, progress)).toBe(false);
  });
});

describe('terminal states', () => {
  it('classifies step and run statuses', () => {
    const terminal: StepStatus[] = ['SUCCEEDED', 'FAILED', 'SKIPPED', 'CANCELLED'];
    const active: StepStatus[] = ['PENDING', 'READY', 'RUNNING'];
    expect(terminal.every(isTerminalStepStatus)).toBe(true);
    expect(active.some(isTerminalStepStatus)).toBe(false);
    expect(isTerminalRunStatus('CANCELLED')).toBe(true);
    expect(isTerminalRunStatus('RUNNING')).toBe(false);
  });
});

describe('deriveRunStatus (seed 000 + DESIGN §2)', () => {
  it('PENDING before anything started', () => {
    expect(deriveRunStatus(makeRun({ a: {}, b: { dependsOn: ['a'] } }))).toBe('PENDING');
  });

  it('RUNNING when a step is READY or RUNNING, or something finished while others wait', () => {
    expect(deriveRunStatus(makeRun({ a: { status: 'READY' } }))).toBe('RUNNING');
    expect(deriveRunStatus(makeRun({ a: { status: 'RUNNING' } }))).toBe('RUNNING');
    expect(deriveRunStatus(makeRun({ a: { status: 'SUCCEEDED' }, b: { dependsOn: ['a'] } }))).toBe(
      'RUNNING',
    );
  });

  it('SUCCEEDED when every step SUCCEEDED or SKIPPED', () => {
    expect(
      deriveRunStatus(
        makeRun({ a: { status: 'SUCCEEDED' }, b: { status: 'SKIPPED' } }, { status: 'RUNNING' }),
      ),
    ).toBe('SUCCEEDED');
  });

  it('FAILED as soon as any step FAILED (default policy), even with others still running', () => {
    const run = makeRun(
      { a: { status: 'FAILED' }, b: { status: 'RUNNING' } },
      { status: 'RUNNING' },
    );
    expect(deriveRunStatus(run)).toBe('FAILED');
  });

  it('CANCELLED on a cancel request, which wins over a failed step', () => {
    const run = makeRun(
      { a: { status: 'FAILED' } },
      { status: 'RUNNING', cancelRequestedAt: iso(1) },
    );
    expect(deriveRunStatus(run)).toBe('CANCELLED');
  });

  it('FAILED once the deadline passed, when now is given', () => {
    const run = makeRun({ a: { status: 'RUNNING' } }, { status: 'RUNNING', deadlineAt: iso(60) });
    expect(deriveRunStatus(run, at(59))).toBe('RUNNING');
    expect(deriveRunStatus(run, at(60))).toBe('FAILED');
    expect(deriveRunStatus(run)).toBe('RUNNING');
  });

  it('terminal run statuses are absorbing', () => {
    const run = makeRun({ a: { status: 'READY' } }, { status: 'SUCCEEDED' });
    expect(deriveRunStatus(run)).toBe('SUCCEEDED');
    expect(deriveRunStatus({ ...run, status: 'CANCELLED' })).toBe('CANCELLED');
  });
});
