import { describe, expect, it } from 'vitest';
import { blockedOn } from './blocked-on';
import { StepNotFoundError } from './errors';
import { at, iso, makeRun } from './testing/run-fixtures';

const run = () =>
  makeRun(
    {
      ohlcv: { status: 'SUCCEEDED', finishedAt: iso(5) },
      charts: {
        status: 'RUNNING',
        attempt: 2,
        dependsOn: ['ohlcv'],
        lease: { owner: 'chart-w', expiresAt: iso(60) },
      },
      other: { status: 'READY', readyAt: iso(10) },
      month: { dependsOn: ['charts', 'ohlcv'] },
      week: { dependsOn: ['month', 'other'] },
      failed: { status: 'FAILED', error: { code: 'LLM_TIMEOUT', message: 't', retryable: true } },
      afterFailed: { dependsOn: ['failed'] },
      ready: { dependsOn: ['ohlcv'] },
    },
    { status: 'RUNNING' },
  );

describe('blockedOn', () => {
  it('explains a PENDING step with direct waits and the active upstream frontier', () => {
    const explanation = blockedOn(run(), 'week', at(30));
    expect(explanation.reasons).toEqual([
      {
        kind: 'waiting_for_dependencies',
        dependencies: [
          { stepId: 'month', status: 'PENDING' },
          { stepId: 'other', status: 'READY' },
        ],
        frontier: [
          { stepId: 'charts', status: 'RUNNING' },
          { stepId: 'other', status: 'READY' },
        ],
      },
    ]);
    expect(explanation.summary).toContain(
      'week is PENDING: waiting for month (PENDING), other (READY)',
    );
    expect(explanation.summary).toContain('charts (RUNNING)');
  });

  it('explains RUNNING, READY and terminal steps', () => {
    expect(blockedOn(run(), 'charts', at(61)).reasons).toEqual([
      {
        kind: 'running',
        attempt: 2,
        leaseOwner: 'chart-w',
        leaseExpiresAt: iso(60),
        expired: true,
      },
    ]);
    expect(blockedOn(run(), 'charts', at(30)).reasons[0]).toMatchObject({ expired: false });
    expect(blockedOn(run(), 'other', at(40)).reasons).toEqual([
      { kind: 'ready_not_claimed', readySince: iso(10), waitingMs: 30_000 },
    ]);
    expect(blockedOn(run(), 'failed').reasons).toEqual([
      { kind: 'step_terminal', status: 'FAILED', errorCode: 'LLM_TIMEOUT' },
    ]);
  });

  it('names a failed dependency and an advance that has not happened yet', () => {
    expect(blockedOn(run(), 'afterFailed').reasons).toEqual([
      { kind: 'dependency_failed', stepId: 'failed', status: 'FAILED' },
    ]);
    expect(blockedOn(run(), 'ready').reasons).toEqual([{ kind: 'awaiting_advance' }]);
  });

  it('mentions run-level blockers: cancel, deadline, run not running', () => {
    const cancelled = blockedOn(
      { ...run(), cancelRequestedAt: iso(20), deadlineAt: iso(25) },
      'other',
      at(30),
    );
    expect(cancelled.reasons.map((r) => r.kind)).toEqual([
      'cancel_requested',
      'deadline_passed',
      'ready_not_claimed',
    ]);
    expect(blockedOn({ ...run(), status: 'FAILED' }, 'month').reasons[0]).toEqual({
      kind: 'run_not_running',
      runStatus: 'FAILED',
    });
  });

  it('throws a typed NOT_FOUND error for an unknown step', () => {
    expect(() => blockedOn(run(), 'nope')).toThrow(StepNotFoundError);
    try {
      blockedOn(run(), 'nope');
    } catch (error) {
      expect(error).toMatchObject({ code: 'NOT_FOUND', details: { stepId: 'nope' } });
    }
  });
});
