import type { FlowSchedule, Signal } from '@tda/contracts';
import { signalIdFor } from '@tda/flow-engine';
import { makeSchedule } from '@tda/flow-engine/testing';

/** A valid ScheduleId from a number: sch_ + 20 digits (`scheduleIdOf(1)` < `scheduleIdOf(2)`). */
export function scheduleIdOf(n: number): string {
  return `sch_${String(n).padStart(20, '0')}`;
}

/** A valid flow_schedules document (flow-engine makeSchedule) with id `scheduleIdOf(n)`. */
export function makeStoredSchedule(n: number, overrides: Partial<FlowSchedule> = {}): FlowSchedule {
  return makeSchedule({ scheduleId: scheduleIdOf(n), ...overrides });
}

/** A valid signal of `scheduleId`'s slot `slotAt`, with the deterministic id. */
export function makeSignal(
  overrides: Partial<Signal> & { scheduleId?: string; slotAt?: string } = {},
): Signal {
  const scheduleId = overrides.scheduleId ?? scheduleIdOf(1);
  const slotAt = overrides.slotAt ?? '2026-03-01T00:05:00.000Z';
  return {
    schemaVersion: 1,
    signalId: signalIdFor(scheduleId, slotAt),
    ownerId: 'alice',
    scheduleId,
    slotAt,
    runId: '20260301-000507_BTC-USDT_k7m2q',
    flowKey: 'recommendation_with_account_v1',
    symbol: 'BTC-USDT',
    symbolKey: 'BTCUSDT',
    asOf: slotAt,
    recommendationId: 'rec_d8bb2137f4886ec060112e5f',
    action: 'BUY',
    signal_strength: 0.62,
    minSignalStrength: 0.6,
    headline: 'Daily uptrend resumes above the weekly pivot',
    createdAt: '2026-03-01T00:09:41.000Z',
    ...overrides,
  };
}
