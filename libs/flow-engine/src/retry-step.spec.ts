import { validate, type FlowRun } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import { advance } from './advance';
import { requestCancel } from './cancel';
import { applyPatch, isEmptyPatch, stepPath } from './patch';
import {
  decideRetry,
  failedStepIds,
  renewedDeadline,
  runDeadlineWindowMs,
  type StepRetryRecord,
} from './retry-step';
import { at, iso, makeRun, statusesOf } from './testing/run-fixtures';

/** Flow-1 shaped: two OHLCV → charts → report chains, the week report reads the month report. */
function failedAtChartsWeek(): FlowRun {
  const running = makeRun(
    {
      o1: { status: 'SUCCEEDED', attempt: 1, outputs: { gcs_uri: 'gs://tda-artifacts/o1.json' } },
      o2: { status: 'SUCCEEDED', attempt: 1, outputs: { gcs_uri: 'gs://tda-artifacts/o2.json' } },
      c1: { status: 'SUCCEEDED', attempt: 1, dependsOn: ['o1'] },
      c2: {
        status: 'FAILED',
        attempt: 3,
        dependsOn: ['o2'],
        finishedAt: iso(20),
        readyAt: iso(5),
        deadlineAt: iso(125),
        outputs: {
          gcs_uri: 'gs://tda-artifacts/c2.json',
          execution: { timing: { startedAt: iso(6) } },
        },
        error: { code: 'MARKET_DATA_UNAVAILABLE', message: 'down', retryable: true },
      },
      r1: { status: 'READY', readyAt: iso(15), dependsOn: ['o1', 'c1'] },
      r2: { dependsOn: ['o2', 'c2', 'r1'] },
    },
    { status: 'RUNNING', startedAt: iso(1), deadlineAt: iso(3600) },
  );
  // The real failure policy: run FAILED, r1 and r2 CANCELLED "because step c2 failed".
  return applyPatch(running, advance(running, at(21)).patch);
}

describe('decideRetry', () => {
  it('re-opens the failed step and every step the failure cancelled, restarts the run and readies what can run', () => {
    const failed = failedAtChartsWeek();
    expect(failed.status).toBe('FAILED');
    expect(statusesOf(failed)).toMatchObject({ c2: 'FAILED', r1: 'CANCELLED', r2: 'CANCELLED' });

    const decision = decideRetry(failed, ['c2'], { now: at(100) });
    expect(decision.kind).toBe('retry');
    if (decision.kind !== 'retry') return;
    expect(decision.retried).toEqual(['c2']);
    expect(decision.reopened).toEqual(['r1', 'r2']);
    expect(decision.advance.newlyReady).toEqual(['c2', 'r1']);

    const retried = applyPatch(failed, decision.patch);
    const checked = validate.flowRun(retried);
    expect(checked.ok ? [] : checked.issues).toEqual([]);
    expect(retried.status).toBe('RUNNING');
    expect(retried.error).toBeUndefined();
    expect(retried.finishedAt).toBeUndefined();
    expect(retried.startedAt).toBe(iso(1));
    // the same one-hour window, counted from the retry
    expect(retried.deadlineAt).toBe(iso(3700));
    expect(statusesOf(retried)).toEqual({
      o1: 'SUCCEEDED',
      o2: 'SUCCEEDED',
      c1: 'SUCCEEDED',
      c2: 'READY',
      r1: 'READY',
      r2: 'PENDING',
    });
    const c2 = retried.steps['c2'];
    expect(c2).toMatchObject({ attempt: 0, outputs: {}, readyAt: iso(100) });
    for (const field of ['error', 'finishedAt', 'deadlineAt', 'lease', 'progress']) {
      expect(c2).not.toHaveProperty(field);
    }
    const history = c2?.['retryHistory'] as StepRetryRecord[];
    expect(history).toEqual([
      {
        retriedAt: iso(100),
        status: 'FAILED',
        attempt: 3,
        error: { code: 'MARKET_DATA_UNAVAILABLE', message: 'down', retryable: true },
        finishedAt: iso(20),
        gcs_uri: 'gs://tda-artifacts/c2.json',
      },
    ]);
    expect(retried.steps['r2']?.['retryHistory']).toEqual([
      expect.objectContaining({ status: 'CANCELLED', attempt: 0 }),
    ]);
    expect(retried['retryHistory']).toEqual([
      {
        retriedAt: iso(100),
        stepIds: ['c2'],
        reopened: ['r1', 'r2'],
        error: failed.error,
        finishedAt: failed.finishedAt,
      },
    ]);
    expect(retried.progress).toMatchObject({ succeeded: 3, ready: 2, pending: 1, cancelled: 0 });
    // One write: advancing the retried run again has nothing to do.
    expect(isEmptyPatch(advance(retried, at(101)).patch)).toBe(true);
  });

  it('is idempotent: a second click after the first wrote answers already_retried', () => {
    const failed = failedAtChartsWeek();
    const first = decideRetry(failed, ['c2'], { now: at(100) });
    if (first.kind !== 'retry') throw new Error('expected a retry');
    const retried = applyPatch(failed, first.patch);
    expect(decideRetry(retried, ['c2'], { now: at(101) })).toEqual({
      kind: 'already_retried',
      stepIds: ['c2'],
    });
  });

  it('a retried step that fails again is retried again, the history growing', () => {
    const failed = failedAtChartsWeek();
    const first = decideRetry(failed, ['c2'], { now: at(100) });
    if (first.kind !== 'retry') throw new Error('expected a retry');
    const again = applyPatch(applyPatch(failed, first.patch), {
      [stepPath('c2', 'status')]: 'FAILED',
      [stepPath('c2', 'attempt')]: 1,
      [stepPath('c2', 'finishedAt')]: iso(110),
      [stepPath('c2', 'error')]: { code: 'STEP_TIMEOUT', message: 'slow', retryable: true },
    });
    const failedAgain = applyPatch(again, advance(again, at(111)).patch);
    expect(failedAgain.status).toBe('FAILED');
    const second = decideRetry(failedAgain, ['c2'], { now: at(200) });
    expect(second.kind).toBe('retry');
    if (second.kind !== 'retry') return;
    const history = applyPatch(failedAgain, second.patch).steps['c2']?.['retryHistory'];
    expect(history).toHaveLength(2);
    expect(history).toEqual([
      expect.objectContaining({ attempt: 3 }),
      expect.objectContaining({
        attempt: 1,
        error: expect.objectContaining({ code: 'STEP_TIMEOUT' }),
      }),
    ]);
  });

  it('refuses a cancelled run: it never restarts', () => {
    const running = makeRun(
      {
        a: { status: 'FAILED', error: { code: 'INTERNAL_ERROR', message: 'x', retryable: false } },
      },
      { status: 'RUNNING' },
    );
    const cancel = requestCancel(running, at(1));
    if (cancel.kind !== 'cancel') throw new Error('expected a cancel');
    const cancelled = applyPatch(running, cancel.patch);
    const decision = decideRetry(cancelled, ['a'], { now: at(2) });
    expect(decision).toMatchObject({ kind: 'conflict', conflict: { kind: 'run_cancelled' } });
  });

  it('refuses a step that is not FAILED and names the failed ones', () => {
    const failed = failedAtChartsWeek();
    expect(decideRetry(failed, ['c1'], { now: at(100) })).toMatchObject({
      kind: 'conflict',
      conflict: {
        kind: 'step_not_failed',
        stepId: 'c1',
        status: 'SUCCEEDED',
        failedStepIds: ['c2'],
      },
    });
    // CANCELLED is not FAILED either (it is re-opened by retrying the failed step)
    expect(decideRetry(failed, ['r2'], { now: at(100) })).toMatchObject({
      kind: 'conflict',
      conflict: { kind: 'step_not_failed', status: 'CANCELLED' },
    });
  });

  it('refuses a FAILED step of a run that has not ended yet', () => {
    const run = makeRun(
      {
        a: { status: 'FAILED', error: { code: 'INTERNAL_ERROR', message: 'x', retryable: false } },
      },
      { status: 'RUNNING' },
    );
    expect(decideRetry(run, ['a'], { now: at(1) })).toMatchObject({
      kind: 'conflict',
      conflict: { kind: 'run_not_failed', runStatus: 'RUNNING' },
    });
  });

  it('waits for steps still running under a live lease; re-opens abandoned ones', () => {
    const failed = failedAtChartsWeek();
    const running = applyPatch(failed, {
      [stepPath('c1', 'status')]: 'RUNNING',
      [stepPath('c1', 'attempt')]: 1,
      [stepPath('c1', 'lease')]: { owner: 'w', expiresAt: iso(160) },
    });
    expect(decideRetry(running, ['c2'], { now: at(100) })).toMatchObject({
      kind: 'conflict',
      conflict: { kind: 'steps_running', stepIds: ['c1'] },
    });
    // After the lease expired the attempt is abandoned: re-opened with the rest.
    const later = decideRetry(running, ['c2'], { now: at(200) });
    expect(later).toMatchObject({ kind: 'retry', reopened: ['c1', 'r1', 'r2'] });
    if (later.kind !== 'retry') return;
    const retried = applyPatch(running, later.patch);
    expect(retried.steps['c1']).toMatchObject({ status: 'READY', attempt: 0 });
    expect(retried.steps['c1']).not.toHaveProperty('lease');
    expect(retried.steps['c1']?.['retryHistory']).toEqual([
      expect.objectContaining({ status: 'RUNNING', attempt: 1 }),
    ]);
  });

  it('requires every failed step to be retried together', () => {
    const error = { code: 'INTERNAL_ERROR' as const, message: 'x', retryable: false };
    const running = makeRun(
      {
        a: { status: 'FAILED', error },
        b: { status: 'FAILED', error },
        c: { dependsOn: ['a', 'b'] },
      },
      { status: 'RUNNING' },
    );
    const failed = applyPatch(running, advance(running, at(1)).patch);
    expect(failedStepIds(failed)).toEqual(['a', 'b']);
    expect(decideRetry(failed, ['a'], { now: at(2) })).toMatchObject({
      kind: 'conflict',
      conflict: { kind: 'other_failed_steps', stepIds: ['b'] },
    });
    const both = decideRetry(failed, ['b', 'a', 'a'], { now: at(2) });
    expect(both).toMatchObject({ kind: 'retry', retried: ['a', 'b'], reopened: ['c'] });
  });

  it('refuses a retry the advance would undo (an invalid graph fails the run again)', () => {
    const error = { code: 'INTERNAL_ERROR' as const, message: 'x', retryable: false };
    const broken = makeRun(
      { a: { status: 'FAILED', error }, b: { dependsOn: ['missing'] } },
      { status: 'FAILED', error },
    );
    expect(decideRetry(broken, ['a'], { now: at(1) })).toMatchObject({
      kind: 'conflict',
      conflict: { kind: 'would_fail_again', runStatus: 'FAILED' },
    });
  });

  it('answers not_found for unknown or unsafe step ids', () => {
    expect(decideRetry(failedAtChartsWeek(), ['nope', 'a.b'], { now: at(1) })).toEqual({
      kind: 'not_found',
      stepIds: ['a.b', 'nope'],
    });
  });
});

describe('renewedDeadline', () => {
  it('keeps the original window length, from now', () => {
    const run = makeRun({ a: {} }, { deadlineAt: iso(600) });
    expect(renewedDeadline(run, at(1000))).toBe(iso(1600));
    expect(renewedDeadline(makeRun({ a: {} }), at(1000))).toBeUndefined();
  });

  it('a second retry keeps the original window too (counted from the latest retry)', () => {
    const retried = makeRun(
      { a: {} },
      {
        deadlineAt: iso(1600),
        retryHistory: [{ retriedAt: iso(1000), stepIds: ['a'], reopened: [] }],
      },
    );
    expect(runDeadlineWindowMs(retried)).toBe(600_000);
    expect(renewedDeadline(retried, at(5000))).toBe(iso(5600));
  });
});

describe('runDeadlineWindowMs', () => {
  it('is deadlineAt - createdAt, or - the latest retriedAt; undefined without a deadline', () => {
    expect(runDeadlineWindowMs(makeRun({ a: {} }, { deadlineAt: iso(600) }))).toBe(600_000);
    expect(runDeadlineWindowMs(makeRun({ a: {} }))).toBeUndefined();
    const twice = makeRun(
      { a: {} },
      {
        deadlineAt: iso(3600),
        retryHistory: [
          { retriedAt: iso(1000), stepIds: ['a'], reopened: [] },
          { retriedAt: iso(3000), stepIds: ['a'], reopened: [] },
        ],
      },
    );
    expect(runDeadlineWindowMs(twice)).toBe(600_000);
  });
});
