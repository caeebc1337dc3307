import { describe, expect, it } from 'vitest';
import { manualClock } from './testing';
import {
  DEFAULT_FINALIZE_BUDGET_MS,
  DEFAULT_INVOCATION_TIMEOUT_MS,
  DEFAULT_REQUEST_DEADLINE_MS,
  TimeBudget,
} from './time-budget';

describe('TimeBudget', () => {
  it('defaults to seed 002: 780 s invocation, 600 s requests, 120 s finalize reserve', () => {
    expect([
      DEFAULT_INVOCATION_TIMEOUT_MS,
      DEFAULT_REQUEST_DEADLINE_MS,
      DEFAULT_FINALIZE_BUDGET_MS,
    ]).toEqual([780_000, 600_000, 120_000]);
    const clock = manualClock();
    const budget = new TimeBudget({ startedAt: clock.now().getTime(), clock: clock.now });
    expect(budget.remainingMs()).toBe(780_000);
    expect(budget.requestDeadlineMs()).toBe(600_000);
    expect(budget.canStartCall()).toBe(true);
  });

  it('shrinks the request deadline so the finalize reserve stays intact', () => {
    const clock = manualClock();
    const budget = new TimeBudget({ startedAt: clock.now().getTime(), clock: clock.now });
    clock.advance(100_000);
    expect(budget.remainingMs()).toBe(680_000);
    expect(budget.requestDeadlineMs()).toBe(560_000);
    clock.advance(540_000);
    expect(budget.requestDeadlineMs()).toBe(20_000);
    expect(budget.canStartCall()).toBe(true);
    clock.advance(20_000);
    expect(budget.remainingMs()).toBe(120_000);
    expect(budget.requestDeadlineMs()).toBe(0);
    expect(budget.canStartCall()).toBe(false);
    clock.advance(1_000_000);
    expect(budget.remainingMs()).toBe(0);
    expect(budget.elapsedMs()).toBe(1_660_000);
  });

  it('can be built from a deadline (the harness step deadline)', () => {
    const clock = manualClock();
    const budget = TimeBudget.until(new Date(clock.now().getTime() + 300_000), {
      clock: clock.now,
      finalizeBudgetMs: 60_000,
    });
    expect(budget.totalMs).toBe(300_000);
    expect(budget.requestDeadlineMs()).toBe(240_000);
    expect(TimeBudget.until(new Date(0), { clock: clock.now }).remainingMs()).toBe(0);
  });

  it('rejects negative or non-finite settings', () => {
    expect(() => new TimeBudget({ startedAt: 0, totalMs: -1 })).toThrow(RangeError);
    expect(() => new TimeBudget({ startedAt: 0, finalizeBudgetMs: Number.NaN })).toThrow(
      RangeError,
    );
  });
});
