import { validate, type FlowRun } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import { advance, withAdvance } from './advance';
import { applyPatch, isEmptyPatch } from './patch';
import { computeProgress } from './run-status';
import { at, iso, makeRun, statusesOf } from './testing/run-fixtures';

const NOW = at(10);

function advanced(run: FlowRun, now = NOW): FlowRun {
  return applyPatch(run, advance(run, now).patch);
}

const chain = (overrides: Partial<FlowRun> = {}): FlowRun =>
  makeRun(
    {
      'ohlcv_export:1M': { timeframe: '1M' },
      'charts:1M:ctpl_default_v1': { timeframe: '1M', dependsOn: ['ohlcv_export:1M'] },
      report: { dependsOn: ['ohlcv_export:1M', 'charts:1M:ctpl_default_v1'] },
    },
    overrides,
  );

describe('advance', () => {
  it('marks roots READY, starts the run and writes progress', () => {
    const result = advance(chain(), NOW);
    expect(result.newlyReady).toEqual(['ohlcv_export:1M']);
    expect(result.runStatus).toBe('RUNNING');
    expect(result.patch).toEqual({
      'steps.ohlcv_export:1M.status': 'READY',
      'steps.ohlcv_export:1M.readyAt': NOW.toISOString(),
      status: 'RUNNING',
      startedAt: NOW.toISOString(),
      progress: {
        total: 3,
        pending: 2,
        ready: 1,
        running: 0,
        succeeded: 0,
        failed: 0,
        skipped: 0,
        cancelled: 0,
        currentStepId: 'ohlcv_export:1M',
      },
    });
    expect(result.patch).not.toHaveProperty('updatedAt');
    expect(validate.flowRun(applyPatch(chain(), result.patch)).ok).toBe(true);
  });

  it('is idempotent: advancing an advanced run yields an empty patch', () => {
    const once = advanced(chain());
    const again = advance(once, at(20));
    expect(isEmptyPatch(again.patch)).toBe(true);
    expect(again.newlyReady).toEqual([]);
  });

  it('makes a step READY only when every dependency SUCCEEDED', () => {
    let run = advanced(chain());
    run = applyPatch(run, { 'steps.ohlcv_export:1M.status': 'SUCCEEDED' });
    const result = advance(run, NOW);
    expect(result.newlyReady).toEqual(['charts:1M:ctpl_default_v1']);
    expect(statusesOf(applyPatch(run, result.patch))['report']).toBe('PENDING');
  });

  it('treats a RUNNING dependency as unmet', () => {
    const run = makeRun(
      { a: { status: 'RUNNING' }, b: { dependsOn: ['a'] } },
      { status: 'RUNNING' },
    );
    expect(advance(run, NOW).newlyReady).toEqual([]);
    expect(advance(run, NOW).patch).toEqual({
      progress: {
        total: 2,
        pending: 1,
        ready: 0,
        running: 1,
        succeeded: 0,
        failed: 0,
        skipped: 0,
        cancelled: 0,
        currentStepId: 'a',
      },
    });
  });

  it('succeeds the run when every step SUCCEEDED', () => {
    const run = makeRun(
      { a: { status: 'SUCCEEDED' }, b: { status: 'SUCCEEDED', dependsOn: ['a'] } },
      { status: 'RUNNING' },
    );
    const result = advance(run, NOW);
    expect(result.runStatus).toBe('SUCCEEDED');
    expect(result.patch).toMatchObject({ status: 'SUCCEEDED', finishedAt: NOW.toISOString() });
    expect(result.patch).not.toHaveProperty('error');
  });

  it('fails the run on a FAILED step and cancels PENDING/READY steps, leaving RUNNING ones', () => {
    const run = makeRun(
      {
        a: {
          status: 'FAILED',
          error: { code: 'LLM_TIMEOUT', message: 'model timed out', retryable: true },
        },
        b: { status: 'READY' },
        c: { status: 'RUNNING', attempt: 1, lease: { owner: 'w', expiresAt: iso(100) } },
        d: { dependsOn: ['a'] },
      },
      { status: 'RUNNING' },
    );
    const result = advance(run, NOW);
    expect(result.runStatus).toBe('FAILED');
    expect(result.newlyCancelled).toEqual(['b', 'd']);
    expect(result.patch['error']).toEqual({
      code: 'LLM_TIMEOUT',
      message: 'step a failed: model timed out',
      details: { stepId: 'a' },
      retryable: false,
    });
    expect(result.patch['steps.d.error']).toMatchObject({
      code: 'CANCELLED',
      message: 'cancelled because step a failed',
      retryable: false,
    });
    expect(result.patch).not.toHaveProperty('steps.c.status');
    const next = applyPatch(run, result.patch);
    expect(statusesOf(next)).toEqual({ a: 'FAILED', b: 'CANCELLED', c: 'RUNNING', d: 'CANCELLED' });
    expect(validate.flowRun(next).ok).toBe(true);
  });

  it('uses INTERNAL_ERROR when the failed step has no error', () => {
    const run = makeRun({ a: { status: 'FAILED' } }, { status: 'RUNNING' });
    expect(advance(run, NOW).runError).toMatchObject({
      code: 'INTERNAL_ERROR',
      details: { stepId: 'a' },
    });
  });

  it('cancels on cancelRequestedAt: run CANCELLED at once, RUNNING steps left to their workers', () => {
    const run = makeRun(
      {
        a: { status: 'RUNNING', attempt: 1, lease: { owner: 'w', expiresAt: iso(100) } },
        b: { dependsOn: ['a'] },
        c: { status: 'READY' },
      },
      { status: 'RUNNING', cancelRequestedAt: iso(5) },
    );
    const result = advance(run, NOW);
    expect(result.runStatus).toBe('CANCELLED');
    expect(result.patch).toMatchObject({
      status: 'CANCELLED',
      finishedAt: NOW.toISOString(),
      'steps.b.status': 'CANCELLED',
      'steps.c.status': 'CANCELLED',
      'steps.c.error': { code: 'CANCELLED', retryable: false },
    });
    expect(result.patch).not.toHaveProperty('steps.a.status');
  });

  it('fails the run with RUN_TIMEOUT once the deadline passed', () => {
    const run = chain({ deadlineAt: iso(5) });
    const result = advance(run, NOW);
    expect(result.runStatus).toBe('FAILED');
    expect(result.runError).toMatchObject({ code: 'RUN_TIMEOUT', retryable: false });
    expect(result.newlyCancelled).toEqual([
      'charts:1M:ctpl_default_v1',
      'ohlcv_export:1M',
      'report',
    ]);
    expect(advance(run, at(4)).runStatus).toBe('RUNNING');
  });

  it('fails an invalid graph with FLOW_RUN_INVALID naming the offender', () => {
    const run = makeRun({ a: { dependsOn: ['ghost'] }, b: {} });
    const result = advance(run, NOW);
    expect(result.runStatus).toBe('FAILED');
    expect(result.runError).toMatchObject({
      code: 'FLOW_RUN_INVALID',
      details: { reason: 'unknown_dependency', stepId: 'a', dependsOn: 'ghost' },
    });
    const cyclic = advance(makeRun({ a: { dependsOn: ['b'] }, b: { dependsOn: ['a'] } }), NOW);
    expect(cyclic.runError?.details).toMatchObject({ reason: 'cycle', cycle: ['a', 'b', 'a'] });
  });

  it('never patches storage-unsafe stepIds', () => {
    const run = makeRun({ 'a.b': {}, c: {} });
    const result = advance(run, NOW);
    expect(result.runError?.details).toMatchObject({ reason: 'unsafe_step_id', stepId: 'a.b' });
    expect(Object.keys(result.patch).some((k) => k.startsWith('steps.a.'))).toBe(false);
    expect(result.patch['steps.c.status']).toBe('CANCELLED');
  });

  it('skips dependents of a SKIPPED step (cascading) and succeeds when the rest SUCCEEDED', () => {
    const run = makeRun(
      {
        a: { status: 'SKIPPED' },
        b: { dependsOn: ['a'] },
        c: { dependsOn: ['b'] },
        d: { status: 'SUCCEEDED' },
      },
      { status: 'RUNNING' },
    );
    const result = advance(run, NOW);
    expect(result.newlySkipped).toEqual(['b', 'c']);
    expect(result.runStatus).toBe('SUCCEEDED');
    expect(statusesOf(applyPatch(run, result.patch))).toEqual({
      a: 'SKIPPED',
      b: 'SKIPPED',
      c: 'SKIPPED',
      d: 'SUCCEEDED',
    });
  });

  it('treats a CANCELLED step outside a run cancel as cancelling the run', () => {
    const run = makeRun(
      { a: { status: 'CANCELLED' }, b: { dependsOn: ['a'] } },
      { status: 'RUNNING' },
    );
    const result = advance(run, NOW);
    expect(result.runStatus).toBe('CANCELLED');
    expect(result.runError).toMatchObject({ code: 'CANCELLED', details: { stepId: 'a' } });
  });

  it('leaves a terminal run alone except for stale progress', () => {
    const run = makeRun(
      { a: { status: 'CANCELLED' }, b: { status: 'READY' } },
      {
        status: 'CANCELLED',
        progress: {
          total: 2,
          pending: 0,
          ready: 1,
          running: 0,
          succeeded: 0,
          failed: 0,
          skipped: 0,
          cancelled: 1,
          currentStepId: 'b',
        },
      },
    );
    expect(advance(run, NOW).patch).toEqual({});
    const stale = { ...run, progress: { ...computeProgress(run), running: 1, ready: 0 } };
    const result = advance(stale, NOW);
    expect(result.patch).toEqual({ progress: computeProgress(run) });
    expect(result.runStatus).toBe('CANCELLED');
  });

  it('withAdvance merges a decision with the advance it implies', () => {
    const run = advanced(chain());
    const { patch, advance: next } = withAdvance(
      run,
      { 'steps.ohlcv_export:1M.status': 'SUCCEEDED' },
      NOW,
    );
    expect(next.newlyReady).toEqual(['charts:1M:ctpl_default_v1']);
    expect(patch).toMatchObject({
      'steps.ohlcv_export:1M.status': 'SUCCEEDED',
      'steps.charts:1M:ctpl_default_v1.status': 'READY',
    });
  });
});
