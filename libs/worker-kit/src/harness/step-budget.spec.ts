import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { abortReasonOf } from '../abortable';
import { StepBudget } from './step-budget';

const T0 = Date.parse('2026-01-15T10:00:00.000Z');

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

function budget(deadlineInMs: number, runDeadlineInMs?: number, live = new Set<StepBudget>()) {
  return new StepBudget({
    deadline: new Date(T0 + deadlineInMs),
    ...(runDeadlineInMs === undefined ? {} : { runDeadlineMs: T0 + runDeadlineInMs }),
    clock: () => new Date(),
    live,
  });
}

describe('StepBudget (timers and abort of one piece of step work)', () => {
  it('aborts with deadline at the step deadline, and is live until stopped', async () => {
    const live = new Set<StepBudget>();
    const b = budget(5_000, undefined, live);
    expect(live.has(b)).toBe(true);
    await vi.advanceTimersByTimeAsync(4_999);
    expect(b.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(abortReasonOf(b.signal)).toEqual({ kind: 'deadline' });
    await b.stop();
    expect(live.has(b)).toBe(false);
  });

  it('a run deadline before the step deadline cancels with cause deadline_passed', async () => {
    const b = budget(5_000, 2_000);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(abortReasonOf(b.signal)).toEqual({ kind: 'cancelled' });
    expect(b.cancelCause).toBe('deadline_passed');
    await b.stop();
  });

  it('a run deadline after the step deadline never fires; stop() clears every timer', async () => {
    const late = budget(1_000, 9_000);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(abortReasonOf(late.signal)).toEqual({ kind: 'deadline' });
    expect(late.cancelCause).toBeUndefined();
    await late.stop();
    const stopped = budget(1_000);
    await stopped.stop();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(stopped.signal.aborted).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('the first abort wins (a shutdown after the deadline does not change the reason)', async () => {
    const b = budget(1_000);
    await vi.advanceTimersByTimeAsync(1_000);
    b.abort({ kind: 'shutdown' });
    expect(abortReasonOf(b.signal)).toEqual({ kind: 'deadline' });
    await b.stop();
  });
});
