import { describe, expect, it } from 'vitest';
import { advance } from './advance';
import { requestCancel } from './cancel';
import { applyPatch, isEmptyPatch } from './patch';
import { decideSkip } from './skip';
import { at, iso, makeRun, statusesOf } from './testing/run-fixtures';

describe('requestCancel', () => {
  it('records the request and cancels in the same patch; RUNNING steps are left to their workers', () => {
    const run = makeRun(
      {
        a: { status: 'RUNNING', lease: { owner: 'w', expiresAt: iso(99) } },
        b: { status: 'READY' },
        c: { dependsOn: ['a'] },
      },
      { status: 'RUNNING' },
    );
    const decision = requestCancel(run, at(5));
    expect(decision.kind).toBe('cancel');
    if (decision.kind !== 'cancel') return;
    expect(decision.patch).toMatchObject({
      cancelRequestedAt: iso(5),
      status: 'CANCELLED',
      finishedAt: iso(5),
    });
    const cancelled = applyPatch(run, decision.patch);
    expect(statusesOf(cancelled)).toEqual({ a: 'RUNNING', b: 'CANCELLED', c: 'CANCELLED' });
    expect(isEmptyPatch(advance(cancelled, at(6)).patch)).toBe(true);
    expect(requestCancel(cancelled, at(7))).toEqual({
      kind: 'noop',
      reason: 'already_terminal',
      runStatus: 'CANCELLED',
    });
  });

  it('cancels a run that never started', () => {
    const decision = requestCancel(makeRun({ a: {} }), at(1));
    expect(decision.kind === 'cancel' && decision.advance.runStatus).toBe('CANCELLED');
    expect(decision.kind === 'cancel' && decision.patch).not.toHaveProperty('startedAt');
  });
});

describe('decideSkip', () => {
  it('skips a step and its dependents, and finishes the run if nothing else is left', () => {
    const run = makeRun(
      {
        a: { status: 'SUCCEEDED' },
        b: { status: 'READY', dependsOn: ['a'] },
        c: { dependsOn: ['b'] },
      },
      { status: 'RUNNING' },
    );
    const decision = decideSkip(run, 'b', { now: at(3) });
    expect(decision.kind).toBe('skip');
    if (decision.kind !== 'skip') return;
    expect(statusesOf(applyPatch(run, decision.patch))).toEqual({
      a: 'SUCCEEDED',
      b: 'SKIPPED',
      c: 'SKIPPED',
    });
    expect(decision.advance.runStatus).toBe('SUCCEEDED');
  });

  it('does not skip claimed or finished steps', () => {
    const run = makeRun({ a: { status: 'RUNNING' } }, { status: 'RUNNING' });
    expect(decideSkip(run, 'a', { now: at(1) })).toMatchObject({
      kind: 'noop',
      reason: 'not_skippable',
      status: 'RUNNING',
    });
    expect(decideSkip(run, 'x', { now: at(1) })).toMatchObject({
      kind: 'noop',
      reason: 'unknown_step',
    });
    expect(decideSkip({ ...run, status: 'FAILED' }, 'a', { now: at(1) })).toMatchObject({
      reason: 'run_terminal',
    });
  });
});
