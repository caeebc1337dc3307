import { describe, expect, it } from 'vitest';
import { previewStepEventReplay, previewStepReadyReplay } from './replay-preview';
import { at, iso, makeRun } from './testing/run-fixtures';

const chart = 'CHART_EXPORT' as const;

describe('previewStepReadyReplay', () => {
  it('lists the steps readied at/after the time with what a worker would do now', () => {
    const run = makeRun(
      {
        o: { status: 'SUCCEEDED', attempt: 1, readyAt: iso(1), finishedAt: iso(5) },
        c_done: {
          stepType: chart,
          status: 'SUCCEEDED',
          attempt: 1,
          dependsOn: ['o'],
          readyAt: iso(10),
        },
        c_ready: { stepType: chart, status: 'READY', dependsOn: ['o'], readyAt: iso(11) },
        c_old_ready: { stepType: chart, status: 'READY', dependsOn: ['o'], readyAt: iso(2) },
        c_running: {
          stepType: chart,
          status: 'RUNNING',
          attempt: 1,
          dependsOn: ['o'],
          readyAt: iso(12),
          lease: { owner: 'w', expiresAt: iso(500) },
        },
        c_lost: {
          stepType: chart,
          status: 'RUNNING',
          attempt: 1,
          dependsOn: ['o'],
          readyAt: iso(12),
          lease: { owner: 'w', expiresAt: iso(50) },
        },
        c_before: {
          stepType: chart,
          status: 'SUCCEEDED',
          attempt: 1,
          dependsOn: ['o'],
          readyAt: iso(3),
        },
        c_pending: { stepType: chart, dependsOn: ['c_done'] },
      },
      { status: 'RUNNING' },
    );
    const items = previewStepReadyReplay(run, chart, { since: at(10), now: at(100) });
    expect(items.map((i) => [i.stepId, i.evidence, i.decision, i.summary])).toEqual([
      ['c_done', 'ready_at', 'noop', 'noop: the step is SUCCEEDED, not READY'],
      ['c_lost', 'ready_at', 'takeover', expect.stringContaining('takeover: the lease expired')],
      ['c_old_ready', 'still_ready', 'execute', 'execute'],
      ['c_ready', 'ready_at', 'execute', 'execute'],
      ['c_running', 'ready_at', 'noop', 'noop: the step is RUNNING, not READY'],
    ]);
    expect(items[0]).toMatchObject({ runId: run.runId, runStatus: 'RUNNING', readyAt: iso(10) });
  });

  it('a finished run: every listed step is a noop naming the run status', () => {
    const run = makeRun(
      {
        a: { stepType: chart, status: 'SUCCEEDED', attempt: 1, readyAt: iso(10) },
        b: { stepType: chart, status: 'SUCCEEDED', attempt: 1, readyAt: iso(20) },
      },
      { status: 'SUCCEEDED' },
    );
    const items = previewStepReadyReplay(run, chart, { since: at(0), now: at(100) });
    expect(items.map((i) => i.summary)).toEqual([
      'noop: the run is SUCCEEDED',
      'noop: the run is SUCCEEDED',
    ]);
    expect(previewStepReadyReplay(run, 'LLM_REPORT', { since: at(0), now: at(100) })).toEqual([]);
  });

  it('skips steps a rerun reused (never dispatched in this run)', () => {
    const run = makeRun(
      {
        a: {
          stepType: chart,
          status: 'SUCCEEDED',
          readyAt: iso(10),
          outputs: {
            execution: {
              reusedFrom: {
                runId: '20250101-000000_BTC-USDT_aaaaa',
                stepId: 'a',
                sourceRunId: '20250101-000000_BTC-USDT_aaaaa',
              },
            },
          },
        },
      },
      { status: 'SUCCEEDED' },
    );
    expect(previewStepReadyReplay(run, chart, { since: at(0), now: at(100) })).toEqual([]);
  });
});

describe('previewStepEventReplay', () => {
  it('a finished run: its workers’ events are listed and the advance is a noop', () => {
    const run = makeRun(
      {
        a: { status: 'SUCCEEDED', attempt: 1, finishedAt: iso(10) },
        b: { status: 'SUCCEEDED', attempt: 2, finishedAt: iso(20), dependsOn: ['a'] },
        old: { status: 'SUCCEEDED', attempt: 1, finishedAt: iso(1) },
      },
      {
        status: 'SUCCEEDED',
        progress: {
          total: 3,
          pending: 0,
          ready: 0,
          running: 0,
          succeeded: 3,
          failed: 0,
          skipped: 0,
          cancelled: 0,
          currentStepId: 'b',
        },
      },
    );
    const preview = previewStepEventReplay(run, { since: at(5), now: at(100) });
    expect(preview).toMatchObject({
      runId: run.runId,
      runStatus: 'SUCCEEDED',
      decision: 'noop',
      wouldBecomeReady: [],
      wouldRepublish: [],
      summary: 'noop: the run is SUCCEEDED, advancing it writes nothing',
    });
    expect(preview?.events.map((e) => e.stepId)).toEqual(['a', 'b']);
    expect(previewStepEventReplay(run, { since: at(50), now: at(100) })).toBeUndefined();
  });

  it('a stuck run: the replayed event would advance it, and READY dependents are republished', () => {
    const run = makeRun(
      {
        a: { status: 'SUCCEEDED', attempt: 1, finishedAt: iso(10) },
        b: { status: 'PENDING', dependsOn: ['a'] },
        c: { status: 'READY', dependsOn: ['a'], readyAt: iso(11) },
        cancelledByAdvance: { status: 'CANCELLED', attempt: 0, finishedAt: iso(12) },
      },
      { status: 'RUNNING' },
    );
    const preview = previewStepEventReplay(run, { since: at(0), now: at(100) });
    expect(preview).toMatchObject({
      decision: 'advance',
      wouldRepublish: ['c'],
    });
    // the orchestrator's own CANCELLED (attempt 0) published no event
    expect(preview?.events.map((e) => e.stepId)).toEqual(['a']);
  });
});
