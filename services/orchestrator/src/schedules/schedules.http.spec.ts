import 'reflect-metadata';
import type { FlowRun } from '@tda/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestOrchestrator, type TestOrchestrator } from '../testing/orchestrator.harness';
import type { ScheduleView } from './schedules.service';
import type { TickReport } from './schedule-firing.service';

/**
 * The schedules API and ticker on in-memory adapters and a manual clock (flow 7). The clock starts
 * at 2025-01-15T10:00:00Z; the market data reaches 2026-09-20, so every slot here has data.
 */
const REQUEST = {
  flowKey: 'market_charts_v1',
  scope: { symbol: 'BTC-USDT', timeframes: ['1d'] },
  cron: '*/15 * * * *',
  timeZone: 'Europe/Berlin',
};

describe('schedules API and ticker (flow 7)', () => {
  let orc: TestOrchestrator;
  beforeEach(async () => {
    orc = await startTestOrchestrator();
  });
  afterEach(async () => {
    await orc.close();
  });

  const create = async (body: Record<string, unknown> = {}): Promise<ScheduleView> => {
    const res = await orc.request('POST', '/schedules', { body: { ...REQUEST, ...body } });
    expect(res.status).toBe(201);
    return res.body as ScheduleView;
  };
  const tick = async (): Promise<TickReport> =>
    (await orc.request('POST', '/admin/schedules/tick', { body: {} })).body as TickReport;
  const runs = async (): Promise<FlowRun[]> =>
    ((await orc.request('GET', '/runs?limit=100')).body as { runs: FlowRun[] }).runs;

  it.each([
    ['an invalid cron expression', { cron: '61 * * * *' }, 'cron'],
    ['an unknown time zone', { timeZone: 'Mars/Olympus' }, 'timeZone'],
    ['an unknown flow', { flowKey: 'nope_v1' }, 'flowKey'],
    [
      'a scope the flow refuses',
      { scope: { symbol: 'BTC-USDT', timeframes: ['7m'] } },
      'timeframes',
    ],
    [
      'an asOf in the scope',
      { scope: { symbol: 'BTC-USDT', asOf: '2025-01-01T00:00:00Z' } },
      'asOf',
    ],
  ])('refuses %s at creation with a 400 naming it', async (_case, change, field) => {
    const res = await orc.request('POST', '/schedules', { body: { ...REQUEST, ...change } });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain(field);
    expect(await runs()).toEqual([]);
  });

  it('shows the next 5 fire times in the schedule’s time zone; pause and resume', async () => {
    const schedule = await create();
    expect(schedule.nextFireTimes).toEqual([
      '2025-01-15T10:15:00.000Z',
      '2025-01-15T10:30:00.000Z',
      '2025-01-15T10:45:00.000Z',
      '2025-01-15T11:00:00.000Z',
      '2025-01-15T11:15:00.000Z',
    ]);
    const paused = await orc.request('POST', `/schedules/${schedule.scheduleId}/pause`, {
      body: {},
    });
    expect(paused.body).toMatchObject({ enabled: false, nextFireTimes: [] });
    orc.clock.advance(60 * 60_000);
    expect((await tick()).fired).toEqual([]);
    const resumed = await orc.request('POST', `/schedules/${schedule.scheduleId}/resume`, {
      body: {},
    });
    expect(resumed.body).toMatchObject({ enabled: true, nextSlotAt: '2025-01-15T11:15:00.000Z' });
  });

  it('fires a due slot once — two instances ticking at once, then again — with asOf = the slot', async () => {
    const schedule = await create();
    orc.clock.advance(15 * 60_000 + 5_000);
    // A second orchestrator on the same stores: the claim's conditional write lets one fire.
    const other = await startTestOrchestrator({
      store: orc.store,
      broker: orc.broker,
      schedules: orc.schedules,
      clock: orc.clock,
    });
    try {
      const ticks = await Promise.all([
        tick(),
        other.request('POST', '/admin/schedules/tick', { body: {} }),
      ]);
      expect(ticks).toHaveLength(2);
    } finally {
      await other.close();
    }
    expect((await tick()).fired).toEqual([]);
    expect(await runs()).toHaveLength(1);
    const [run] = await runs();
    expect(run).toMatchObject({
      scope: { asOf: '2025-01-15T10:15:00Z' },
      trigger: { type: 'SCHEDULER', scheduleId: schedule.scheduleId },
      idempotencyKey: expect.stringMatching(/^schedule:/) as unknown,
    });
    const shown = (await orc.request('GET', `/schedules/${schedule.scheduleId}`)).body;
    expect(shown).toMatchObject({ lastRunId: run?.runId, lastFire: { outcome: 'fired' } });
  });

  it('fire-now and backfill: one run per slot; a future or off-expression slot is a 400', async () => {
    const { scheduleId } = await create();
    const first = await orc.request('POST', `/schedules/${scheduleId}/fire`, { body: {} });
    const again = await orc.request('POST', `/schedules/${scheduleId}/fire`, { body: {} });
    expect([first.status, again.status]).toEqual([201, 200]);
    expect((again.body as { runId: string }).runId).toBe((first.body as { runId: string }).runId);
    const backfill = await orc.request('POST', `/schedules/${scheduleId}/fire`, {
      body: { slotAt: '2025-01-14T23:45:00Z' },
    });
    expect(backfill.status).toBe(201);
    for (const slotAt of ['2025-01-14T23:44:00Z', '2099-01-01T00:00:00Z', 'yesterday']) {
      const res = await orc.request('POST', `/schedules/${scheduleId}/fire`, { body: { slotAt } });
      expect(res.status).toBe(400);
    }
    expect(await runs()).toHaveLength(2);
  });

  it('the reconciler decides the signal of a scheduled run whose last step event never got through', async () => {
    const { scheduleId } = await create({ minSignalStrength: 0.5 });
    const fired = (await orc.request('POST', `/schedules/${scheduleId}/fire`, { body: {} }))
      .body as { runId: string };
    // No workers here: finish the run by hand, as if its events had all been lost.
    const found = await orc.store.get(fired.runId);
    if (found === null) throw new Error('no run');
    const patch: Record<string, unknown> = { status: 'SUCCEEDED' };
    for (const stepId of Object.keys(found.run.steps))
      patch[`steps.${stepId}.status`] = 'SUCCEEDED';
    await orc.store.update(fired.runId, patch, found.version);
    await orc.reconciler.reconcileOnce();
    const run = (await orc.request('GET', `/runs/${fired.runId}`)).body as FlowRun;
    // market_charts_v1 has no recommendation: nothing to filter, and the run says why.
    expect(run.signal).toMatchObject({ status: 'none', reason: 'no_recommendation' });
  });

  it('refuses a trigger request that names a schedule (only schedules set it)', async () => {
    const res = await orc.request('POST', '/runs', {
      body: {
        flowKey: 'market_charts_v1',
        scope: { symbol: 'BTC-USDT' },
        trigger: { type: 'SCHEDULER', source: 'me', scheduleId: 'sch_aaaaaaaaaaaaaaaaaaaa' },
      },
    });
    expect(res.status).toBe(400);
  });

  it('lists the owner’s schedules and deletes one (then 404)', async () => {
    const { scheduleId } = await create();
    const list = (await orc.request('GET', '/schedules')).body as {
      schedules: { scheduleId: string }[];
    };
    expect(list.schedules.map((s) => s.scheduleId)).toEqual([scheduleId]);
    expect((await orc.request('DELETE', `/schedules/${scheduleId}`)).status).toBe(204);
    expect((await orc.request('GET', `/schedules/${scheduleId}`)).status).toBe(404);
    expect((await orc.request('GET', '/schedules?limit=0')).status).toBe(400);
  });
});
