import { makeRun, T0 } from '@tda/flow-engine/testing';
import { describe, expect, it } from 'vitest';
import { advanceDecision } from './advance.decision';

describe('advanceDecision', () => {
  it('dispatches the newly READY steps (advance), then the READY ones to republish (retry), each once', () => {
    const run = makeRun(
      { a: { status: 'SUCCEEDED' }, b: { status: 'READY' }, c: { dependsOn: ['a'] } },
      { status: 'RUNNING' },
    );

    const decision = advanceDecision(run, T0, ['c', 'b']);

    expect(decision).toMatchObject({ kind: 'write', result: { newlyReady: ['c'] } });
    expect(decision.kind === 'write' && decision.advance).toBe(decision.result);
    expect(decision.dispatch).toEqual([
      { stepId: 'c', reason: 'advance' },
      { stepId: 'b', reason: 'retry' },
    ]);
  });

  it('is an empty patch (a noop for RunWriter) when the run is already advanced', () => {
    const run = makeRun({ a: { status: 'READY' } }, { status: 'RUNNING' });

    const decision = advanceDecision(run, T0);

    expect(decision).toMatchObject({ kind: 'write', patch: {}, dispatch: [] });
  });
});
