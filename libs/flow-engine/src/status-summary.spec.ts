import { validate, type RunStatus } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import { runStatusSummary, SEED_LIFECYCLE } from './status-summary';
import { iso, makeRun } from './testing/run-fixtures';

describe('runStatusSummary (seed 004 status.json)', () => {
  it('a running run: lifecycle word, current step, counts; valid against its contract', () => {
    const run = makeRun(
      {
        a: { status: 'SUCCEEDED', finishedAt: iso(5) },
        b: { status: 'SKIPPED' },
        c: { status: 'RUNNING', dependsOn: ['a'] },
        d: { status: 'PENDING', dependsOn: ['c'] },
      },
      { status: 'RUNNING', startedAt: iso(1) },
    );
    const summary = runStatusSummary(run);
    expect(summary).toMatchObject({
      run_id: run.runId,
      status: 'running',
      run_status: 'RUNNING',
      started_at: iso(1),
      finished_at: null,
      current_step: 'c',
      steps_total: 4,
      steps_completed: 2,
      error: null,
    });
    const checked = validate.runStatusSummary(summary);
    expect(checked.ok ? [] : checked.issues).toEqual([]);
  });

  it('a failed run: the error as CODE: message, and where it stopped', () => {
    const run = makeRun(
      { a: { status: 'FAILED' }, b: { status: 'CANCELLED' } },
      {
        status: 'FAILED',
        finishedAt: iso(9),
        error: { code: 'LLM_TIMEOUT', message: 'the model did not answer', retryable: false },
      },
    );
    expect(runStatusSummary(run)).toMatchObject({
      status: 'failed',
      current_step: 'a',
      finished_at: iso(9),
      error: 'LLM_TIMEOUT: the model did not answer',
    });
  });

  it('maps every TDA status to a seed lifecycle word, terminal ones to terminal words', () => {
    const terminal = new Set(['completed', 'failed', 'cancelled']);
    for (const [status, word] of Object.entries(SEED_LIFECYCLE) as [RunStatus, string][]) {
      const isTerminal = status === 'SUCCEEDED' || status === 'FAILED' || status === 'CANCELLED';
      expect(terminal.has(word)).toBe(isTerminal);
    }
  });
});
