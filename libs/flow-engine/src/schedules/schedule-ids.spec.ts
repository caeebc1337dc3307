import { validate } from '@tda/contracts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { makeSchedule } from '../testing/schedule-fixtures';
import {
  SCHEDULE_ID_PATTERN,
  SIGNAL_ID_PATTERN,
  fireNowSlot,
  generateScheduleId,
  parseSlotIdempotencyKey,
  signalIdFor,
  slotIdempotencyKey,
} from './schedule-ids';

const SCHEDULE = 'sch_4k9m2x7q1w8e5r3t6y0u';

describe('generateScheduleId', () => {
  it('makes ids the flow_schedule contract accepts, from any random source', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: -1, max: 2, noNaN: true }), { minLength: 1 }), (xs) => {
        let i = 0;
        const id = generateScheduleId(() => xs[i++ % xs.length] ?? 0);
        expect(id).toMatch(SCHEDULE_ID_PATTERN);
        expect(validate.flowSchedule(makeSchedule({ scheduleId: id })).ok).toBe(true);
      }),
    );
  });

  it('SCHEDULE_ID_PATTERN refuses what the contract refuses', () => {
    for (const id of ['sch_short', 'sch_AAAAAAAAAAAAAAAAAAAA', 'sig_aaaaaaaaaaaaaaaaaaaa']) {
      expect(id).not.toMatch(SCHEDULE_ID_PATTERN);
      expect(validate.flowSchedule(makeSchedule({ scheduleId: id })).ok).toBe(false);
    }
  });
});

describe('slotIdempotencyKey', () => {
  it('names (schedule, slot) in the trigger request key alphabet; ms precision does not matter', () => {
    const key = slotIdempotencyKey(SCHEDULE, '2026-09-20T00:00:00Z');
    expect(key).toBe('schedule:sch_4k9m2x7q1w8e5r3t6y0u:20260920T000000Z');
    expect(slotIdempotencyKey(SCHEDULE, new Date('2026-09-20T00:00:00.000Z'))).toBe(key);
    const request = validate.triggerRequest({
      flowKey: 'recommendation_with_account_v1',
      scope: { symbol: 'BTC-USDT' },
      idempotencyKey: key,
    });
    expect(request.ok).toBe(true);
  });

  it('round-trips through parseSlotIdempotencyKey', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_102_444_800 }), (seconds) => {
        const slotAt = new Date(seconds * 1000).toISOString();
        expect(parseSlotIdempotencyKey(slotIdempotencyKey(SCHEDULE, slotAt))).toEqual({
          scheduleId: SCHEDULE,
          slotAt,
        });
      }),
    );
  });

  it('parseSlotIdempotencyKey: any other key is undefined', () => {
    for (const key of [
      undefined,
      '',
      'user-key-1',
      'schedule:sch_short:20260920T000000Z',
      `schedule:${SCHEDULE}:20260231T000000Z`,
      `schedule:${SCHEDULE}:20260920T000000`,
      `schedule:${SCHEDULE}:20260920T246000Z`,
    ]) {
      expect(parseSlotIdempotencyKey(key)).toBeUndefined();
    }
  });

  it('refuses a malformed schedule id or slot', () => {
    expect(() => slotIdempotencyKey('nope', '2026-09-20T00:00:00Z')).toThrow(/scheduleId/);
    expect(() => slotIdempotencyKey(SCHEDULE, 'yesterday')).toThrow(/invalid date/);
  });
});

describe('signalIdFor', () => {
  it('is deterministic per (schedule, slot instant) and names the example signal', () => {
    const id = signalIdFor(SCHEDULE, '2026-09-20T00:00:00.000Z');
    // contracts/examples/signal.example.json
    expect(id).toBe('sig_826e34e765d8a2a23ea296a3');
    expect(id).toMatch(SIGNAL_ID_PATTERN);
    expect(signalIdFor(SCHEDULE, '2026-09-20T00:00:00Z')).toBe(id);
    expect(signalIdFor(SCHEDULE, '2026-09-20T00:01:00Z')).not.toBe(id);
    expect(signalIdFor('sch_aaaaaaaaaaaaaaaaaaaa', '2026-09-20T00:00:00Z')).not.toBe(id);
  });
});

describe('fireNowSlot', () => {
  it('truncates to the minute: two fire-now calls in one minute are one slot', () => {
    expect(fireNowSlot(new Date('2026-09-20T10:17:00.000Z'))).toBe('2026-09-20T10:17:00.000Z');
    expect(fireNowSlot(new Date('2026-09-20T10:17:59.999Z'))).toBe('2026-09-20T10:17:00.000Z');
    expect(fireNowSlot(new Date('2026-09-20T10:18:00.001Z'))).toBe('2026-09-20T10:18:00.000Z');
    expect(fireNowSlot(new Date(-1))).toBe('1969-12-31T23:59:00.000Z');
  });
});
