import { describe, expect, it } from 'vitest';
import {
  fireOutcome,
  formatInZone,
  initialScheduleFields,
  isTimeZone,
  nextFireOf,
  scheduleScopeForm,
  signalDecision,
  toScheduleRequest,
  validateScheduleFields,
} from './schedules';
import { scopeFormFromSchema } from './scope-form';

const fields = (overrides: Partial<ReturnType<typeof initialScheduleFields>> = {}) => ({
  ...initialScheduleFields(),
  ...overrides,
});

describe('schedule form', () => {
  it('accepts the defaults and sends only what differs from the server defaults', () => {
    expect(validateScheduleFields(fields())).toEqual({});
    expect(
      toScheduleRequest('recommendation_with_account_v1', { symbol: 'BTC-USDT' }, fields()),
    ).toEqual({
      flowKey: 'recommendation_with_account_v1',
      scope: { symbol: 'BTC-USDT' },
      cron: '0 8 * * *',
    });
  });

  it('sends every choice, the cron with single spaces', () => {
    const request = toScheduleRequest(
      'recommendation_with_account_v1',
      { symbol: 'BTC-USDT', accountId: 'demo' },
      fields({
        cron: ' 0  8 * *\t1-5 ',
        timeZone: ' Europe/London ',
        catchUp: 'latest',
        overlap: 'allow',
        minSignal: '0.7',
        paused: true,
        description: ' London open ',
      }),
    );
    expect(request).toEqual({
      flowKey: 'recommendation_with_account_v1',
      scope: { symbol: 'BTC-USDT', accountId: 'demo' },
      cron: '0 8 * * 1-5',
      timeZone: 'Europe/London',
      catchUp: 'latest',
      overlap: 'allow',
      minSignalStrength: 0.7,
      enabled: false,
      description: 'London open',
    });
  });

  it('names each problem', () => {
    expect(
      validateScheduleFields(
        fields({
          cron: '0 8 * *',
          timeZone: 'Mars/Olympus',
          minSignal: '1.2',
          description: 'x'.repeat(201),
        }),
      ),
    ).toEqual({
      cron: expect.stringMatching(/^Five fields/),
      timeZone: expect.stringMatching(/IANA time zone/),
      minSignal: expect.stringMatching(/0 to 1/),
      description: 'At most 200 characters',
    });
    expect(validateScheduleFields(fields({ minSignal: 'abc' }))).toHaveProperty('minSignal');
    expect(validateScheduleFields(fields({ minSignal: '0' }))).toEqual({});
    expect(validateScheduleFields(fields({ timeZone: '' }))).toHaveProperty('timeZone');
  });

  it('knows IANA zones', () => {
    expect(isTimeZone('America/New_York')).toBe(true);
    expect(isTimeZone('UTC')).toBe(true);
    expect(isTimeZone('Nowhere/City')).toBe(false);
  });

  it("leaves asOf out of the flow's scope form (a scheduled run's asOf is its slot)", () => {
    const form = scopeFormFromSchema({
      type: 'object',
      required: ['symbol'],
      properties: {
        symbol: { type: 'string' },
        asOf: { type: 'string', format: 'date-time' },
        accountId: { type: 'string' },
      },
    });
    expect(scheduleScopeForm(form).fields.map((f) => f.name)).toEqual(['symbol', 'accountId']);
  });
});

describe('schedule reading', () => {
  it('the next fire: the first of nextFireTimes, else nextSlotAt, none while paused', () => {
    const next = ['2026-09-21T07:00:00.000Z', '2026-09-22T07:00:00.000Z'];
    expect(nextFireOf({ enabled: true, nextFireTimes: next, nextSlotAt: 'x' })).toBe(next[0]);
    expect(nextFireOf({ enabled: true, nextSlotAt: '2026-09-21T07:00:00.000Z' })).toBe(
      '2026-09-21T07:00:00.000Z',
    );
    expect(nextFireOf({ enabled: false, nextFireTimes: next })).toBeUndefined();
  });

  it('formats a fire time in the schedule’s zone (DST aware)', () => {
    // The weekday's punctuation follows the runtime's locale data.
    expect(formatInZone('2026-07-15T07:00:00.000Z', 'Europe/London')).toMatch(
      /^Wed,? 15 Jul 2026, 08:00$/,
    );
    expect(formatInZone('2026-01-15T08:00:00.000Z', 'Europe/London')).toMatch(
      /^Thu,? 15 Jan 2026, 08:00$/,
    );
    expect(formatInZone('not a time', 'UTC')).toBe('not a time');
  });

  it('reads each fire outcome', () => {
    const fire = { slotAt: '2026-09-20T08:00:00.000Z', at: '2026-09-20T08:00:04.000Z' };
    expect(fireOutcome({ ...fire, outcome: 'fired' })).toEqual({ label: 'Fired', tone: 'success' });
    expect(fireOutcome({ ...fire, outcome: 'failed' }).tone).toBe('danger');
    expect(fireOutcome({ ...fire, outcome: 'skipped_overlap' }).label).toMatch(/still active/);
    expect(fireOutcome({ ...fire, outcome: 'skipped_missed' }).label).toMatch(/missed/);
  });

  it("reads a run's signal decision with strength vs threshold", () => {
    const decidedAt = '2026-09-20T08:04:00.000Z';
    expect(
      signalDecision({
        status: 'emitted',
        signal_strength: 0.82,
        minSignalStrength: 0.7,
        signalId: 'sig_1',
        decidedAt,
      }),
    ).toEqual({ label: 'Signal emitted', detail: 'strength 0.82 ≥ 0.70', tone: 'success' });
    expect(
      signalDecision({
        status: 'filtered',
        signal_strength: 0.55,
        minSignalStrength: 0.7,
        decidedAt,
      }),
    ).toEqual({ label: 'Signal filtered', detail: 'strength 0.55 < 0.70', tone: 'skipped' });
    expect(signalDecision({ status: 'none', reason: 'no recommendation step', decidedAt })).toEqual(
      {
        label: 'No signal',
        detail: 'no recommendation step',
        tone: 'idle',
      },
    );
  });
});
