import { validate } from '@tda/contracts';
import { describe, expect, it } from 'vitest';
import { makeSchedule, makeSignalRecommendation } from '../testing/schedule-fixtures';
import { signalIdFor, slotIdempotencyKey } from './schedule-ids';
import { decideSignal, type SignalInput } from './signal';

const schedule = makeSchedule({ minSignalStrength: 0.6 });
const SLOT = '2026-03-01T00:05:00.000Z';
const run: SignalInput['run'] = {
  runId: '20260301-000507_BTC-USDT_k7m2q',
  status: 'SUCCEEDED',
  flowKey: 'recommendation_with_account_v1',
  idempotencyKey: slotIdempotencyKey(schedule.scheduleId, SLOT),
};
const now = new Date('2026-03-01T00:09:41.000Z');

function input(overrides: Partial<SignalInput> = {}): SignalInput {
  return { schedule, run, recommendation: makeSignalRecommendation(), now, ...overrides };
}

describe('decideSignal', () => {
  it('emits a valid signal with the deterministic id of (schedule, slot)', () => {
    const decision = decideSignal(input());
    expect(decision).toEqual({
      kind: 'emit',
      signal: {
        schemaVersion: 1,
        signalId: signalIdFor(schedule.scheduleId, SLOT),
        ownerId: 'alice',
        scheduleId: schedule.scheduleId,
        slotAt: SLOT,
        runId: run.runId,
        flowKey: 'recommendation_with_account_v1',
        symbol: 'BTC-USDT',
        symbolKey: 'BTCUSDT',
        asOf: SLOT,
        recommendationId: 'rec_d8bb2137f4886ec060112e5f',
        action: 'BUY',
        signal_strength: 0.62,
        minSignalStrength: 0.6,
        headline: 'Daily uptrend resumes above the weekly pivot',
        createdAt: '2026-03-01T00:09:41.000Z',
      },
    });
    if (decision.kind === 'emit') expect(validate.signal(decision.signal).ok).toBe(true);
  });

  it('a replay later decides the same signal id (create-only makes it one signal)', () => {
    const first = decideSignal(input());
    const replay = decideSignal(input({ now: new Date('2026-03-02T00:00:00Z') }));
    expect(first.kind === 'emit' && replay.kind === 'emit').toBe(true);
    if (first.kind === 'emit' && replay.kind === 'emit') {
      expect(replay.signal.signalId).toBe(first.signal.signalId);
    }
  });

  it('the threshold is inclusive; below it the run is filtered', () => {
    const at = makeSignalRecommendation({ signal_strength: 0.6 });
    expect(decideSignal(input({ recommendation: at })).kind).toBe('emit');
    const below = makeSignalRecommendation({ signal_strength: 0.59 });
    expect(decideSignal(input({ recommendation: below }))).toEqual({
      kind: 'filtered',
      signal_strength: 0.59,
      minSignalStrength: 0.6,
    });
    const zero = makeSchedule({ minSignalStrength: 0 });
    const none = makeSignalRecommendation({ signal_strength: 0 });
    expect(decideSignal(input({ schedule: zero, recommendation: none })).kind).toBe('emit');
  });

  it.each([
    ['not_scheduled', { run: { ...run, idempotencyKey: 'my-key' } }],
    ['not_scheduled', { run: { ...run, idempotencyKey: undefined } }],
    [
      'not_scheduled',
      { run: { ...run, idempotencyKey: slotIdempotencyKey('sch_bbbbbbbbbbbbbbbbbbbb', SLOT) } },
    ],
    ['run_not_succeeded', { run: { ...run, status: 'FAILED' as const } }],
    ['run_not_succeeded', { run: { ...run, status: 'RUNNING' as const } }],
    ['no_threshold', { schedule: makeSchedule() }],
    ['no_recommendation', { recommendation: undefined }],
  ] as const)('emits nothing: %s', (reason, overrides) => {
    expect(decideSignal(input(overrides))).toEqual({ kind: 'none', reason });
  });
});
