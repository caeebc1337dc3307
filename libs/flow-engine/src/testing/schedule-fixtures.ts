import type { FlowSchedule, RecommendationIndexEntry } from '@tda/contracts';
import type { SignalRecommendation } from '../schedules';

/** A valid flow_schedules document (validate.flowSchedule): enabled, every 5 minutes in UTC. */
export function makeSchedule(overrides: Partial<FlowSchedule> = {}): FlowSchedule {
  return {
    schemaVersion: 1,
    scheduleId: 'sch_aaaaaaaaaaaaaaaaaaaa',
    ownerId: 'alice',
    flowKey: 'recommendation_with_account_v1',
    scope: { symbol: 'BTC-USDT' },
    cron: '*/5 * * * *',
    timeZone: 'UTC',
    enabled: true,
    catchUp: 'skip',
    overlap: 'skip',
    createdAt: '2026-03-01T00:00:00.000Z',
    updatedAt: '2026-03-01T00:00:00.000Z',
    nextSlotAt: '2026-03-01T00:05:00.000Z',
    ...overrides,
  };
}

/** The fields of a recommendations/{recoId} entry a signal carries. */
export function makeSignalRecommendation(
  overrides: Partial<SignalRecommendation> = {},
): SignalRecommendation {
  const action: RecommendationIndexEntry['action'] = 'BUY';
  return {
    recommendationId: 'rec_d8bb2137f4886ec060112e5f',
    action,
    signal_strength: 0.62,
    headline: 'Daily uptrend resumes above the weekly pivot',
    symbol: 'BTC-USDT',
    symbolKey: 'BTCUSDT',
    asOf: '2026-03-01T00:05:00.000Z',
    ...overrides,
  };
}
