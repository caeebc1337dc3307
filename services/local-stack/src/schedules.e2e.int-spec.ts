import type { FlowRun, FlowSchedule, FlowScheduleRequest, Signal } from '@tda/contracts';
import { stepEventsSubscription } from '@tda/messaging';
import { expectEventually } from '@tda/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startE2eStack, waitForRunStatus, type E2eStack } from './testing/e2e-stack';

/**
 * Flow 7 end to end on the emulators with the orchestrator on a controllable clock (the ticker
 * off; each tick is POST /admin/schedules/tick, as Cloud Scheduler calls it): every slot fires
 * once even when two ticks race, catch-up skip and latest differ after a gap, and a run's
 * recommendation emits a signal only at or above the schedule's threshold — once, replay or not.
 */

let now = new Date('2026-09-19T10:00:30Z');
const at = (iso: string): void => {
  now = new Date(iso);
};
const SCOPE: FlowScheduleRequest['scope'] = {
  symbol: 'BTC-USDT',
  accountId: 'demo',
  timeframes: ['1d', '4h'],
};

describe('flow 7: schedules and signals end to end (emulators, controllable clock)', () => {
  let h: E2eStack;
  let emitting: FlowSchedule;
  let filtering: FlowSchedule;
  beforeAll(async () => {
    h = await startE2eStack({
      name: 'flow7',
      // Runs without a deadline: it would be on the orchestrator's clock, the workers' is real.
      env: { TDA_SCHEDULE_TICK_MS: '0', TDA_DEFAULT_RUN_DEADLINE_SECONDS: '0' },
      hooks: { clock: () => now },
    });
    const create = async (body: Partial<FlowScheduleRequest>): Promise<FlowSchedule> =>
      h.api.createSchedule({
        flowKey: 'recommendation_with_account_v1',
        scope: SCOPE,
        cron: '0 * * * *',
        timeZone: 'Europe/London',
        overlap: 'allow',
        ...body,
      });
    emitting = await create({ catchUp: 'skip', minSignalStrength: 0 });
    filtering = await create({ catchUp: 'latest', minSignalStrength: 1 });
  }, 60_000);
  afterAll(async () => {
    await h?.stack.close();
  });

  const runsOf = async (schedule: FlowSchedule): Promise<FlowRun[]> =>
    (await h.api.listRuns({ limit: 100 })).runs.filter(
      (r) => r.trigger.scheduleId === schedule.scheduleId,
    );
  const signals = async (): Promise<Signal[]> =>
    (await h.api.listSignals({ symbol: 'btc/usdt' })).signals;
  const emitted = (): number => h.logs.withEvent('signal_emitted').length;

  it('fires each slot once, even for two concurrent ticks; asOf is the slot', async () => {
    expect(await runsOf(emitting)).toEqual([]);
    at('2026-09-19T11:00:10Z');
    await Promise.all([h.api.tickSchedules(), h.api.tickSchedules()]);
    for (const schedule of [emitting, filtering]) {
      const runs = await runsOf(schedule);
      expect(runs.map((r) => [r.scope.asOf, r.trigger.slotAt])).toEqual([
        ['2026-09-19T11:00:00Z', '2026-09-19T11:00:00.000Z'],
      ]);
    }
    await h.api.tickSchedules(); // the same minute again: nothing new
    expect(await runsOf(emitting)).toHaveLength(1);
  }, 60_000);

  it('emits a signal at or above the threshold only, once under replay', async () => {
    const [a] = await runsOf(emitting);
    const [b] = await runsOf(filtering);
    const doneA = await waitForRunStatus(h.api, a?.runId ?? '', 'SUCCEEDED', 120_000);
    const doneB = await waitForRunStatus(h.api, b?.runId ?? '', 'SUCCEEDED', 120_000);
    const signalOf = async (runId: string) =>
      expectEventually(async () => {
        const run = await h.api.getRun(runId);
        expect(run.signal).toBeDefined();
        return run.signal;
      });
    expect(await signalOf(doneA.runId)).toMatchObject({ status: 'emitted', minSignalStrength: 0 });
    expect(await signalOf(doneB.runId)).toMatchObject({ status: 'filtered', minSignalStrength: 1 });
    const list = await signals();
    expect(list.map((s) => [s.scheduleId, s.runId])).toEqual([[emitting.scheduleId, doneA.runId]]);
    expect(list[0]?.publishedAt).toBeDefined();
    expect(emitted()).toBe(1);

    // A replay of the step events: every event again, nothing emitted again.
    const seen = h.logs.withEvent('message_acked').length;
    await h.api.replay({
      subscription: stepEventsSubscription(h.prefix),
      // On the orchestrator's clock (hours before the messages' real publish times): all of them.
      time: new Date(now.getTime() - 10 * 60_000).toISOString(),
    });
    await expectEventually(() =>
      expect(h.logs.withEvent('message_acked').length - seen).toBeGreaterThan(5),
    );
    expect(await signals()).toHaveLength(1);
    expect(emitted()).toBe(1);
  }, 150_000);

  it('after a gap: catch-up skip skips the stale slot, latest runs it once', async () => {
    at('2026-09-19T14:05:00Z'); // 12:00, 13:00, 14:00 missed; 14:00 is 5 minutes old
    const report = (await h.api.tickSchedules()) as {
      fired: { scheduleId: string; slotAt: string }[];
      skipped: { scheduleId: string; outcome: string }[];
    };
    expect(report.skipped).toEqual([
      expect.objectContaining({ scheduleId: emitting.scheduleId, outcome: 'skipped_missed' }),
    ]);
    expect(report.fired.map((f) => [f.scheduleId, f.slotAt])).toEqual([
      [filtering.scheduleId, '2026-09-19T14:00:00.000Z'],
    ]);
    expect(await runsOf(emitting)).toHaveLength(1);
    expect(await runsOf(filtering)).toHaveLength(2);
    const shown = await h.api.getSchedule(emitting.scheduleId);
    expect(shown.lastFire).toMatchObject({ outcome: 'skipped_missed' });
    expect(shown.nextFireTimes?.[0]).toBe('2026-09-19T15:00:00.000Z');
  }, 60_000);
});
