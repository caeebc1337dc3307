import type { FlowRun } from '@tda/contracts';
import { RECOMMENDATION_FLOW_KEY } from '@tda/flow-engine';
import { ApiClient, renderScheduleList, watchRun } from '@tda/service-cli';

export interface DemoScheduleOptions {
  url: string;
  token: string;
  symbol: string;
  accountId: string;
  /** The demo run: its asOf is the slot the schedule backfills (the newest data). */
  demoRun: FlowRun;
  out: { write(text: string): boolean; isTTY?: boolean };
  signal?: AbortSignal;
}

const DESCRIPTION = 'npm start demo: flow 4 every 5 minutes, signals at 0.3';

/**
 * `npm start` shows a schedule (flow 7): flow 4 for the demo symbol every 5 minutes, with a
 * signal threshold. The bundled market data ends at the demo run's asOf, so a slot "now" has no
 * candles: the schedule is created paused and one slot — the newest one the data reaches — is
 * fired by backfill, so its run, its signal decision and `tda schedule list` show the whole
 * mechanism. Resume it against a live exchange (TDA_MARKET_DATA=ccxt). Reused on a restart.
 */
export async function runDemoSchedule(options: DemoScheduleOptions): Promise<void> {
  const api = new ApiClient({ baseUrl: options.url, token: options.token });
  const existing = (await api.listSchedules({ limit: 100 })).schedules.find(
    (s) => s.description === DESCRIPTION,
  );
  const schedule =
    existing ??
    (await api.createSchedule({
      flowKey: RECOMMENDATION_FLOW_KEY,
      scope: { symbol: options.symbol, accountId: options.accountId },
      cron: '*/5 * * * *',
      timeZone: 'UTC',
      enabled: false,
      minSignalStrength: 0.3,
      description: DESCRIPTION,
    }));
  const slotAt = options.demoRun.scope.asOf;
  const out = options.out;
  out.write(
    `\nschedule ${schedule.scheduleId} (paused: the bundled data ends ${String(slotAt)})\n`,
  );
  if (slotAt !== undefined) {
    const fired = await api.fireSchedule(schedule.scheduleId, slotAt);
    out.write(`backfilled slot ${fired.slotAt}: run ${fired.runId}\n`);
    const run = await watchRun(api, fired.runId, {
      out,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    out.write(`${signalLine(await signalOf(api, run))}\n`);
  }
  const list = await api.listSchedules({ limit: 100 });
  out.write(`\n$ npx tda schedule list\n${renderScheduleList(list.schedules)}\n`);
}

/** run.signal is written just after the run's last step event: wait for it a few seconds. */
async function signalOf(api: ApiClient, run: FlowRun): Promise<FlowRun['signal']> {
  for (let i = 0; i < 50 && run.status === 'SUCCEEDED'; i += 1) {
    const current = await api.getRun(run.runId);
    if (current.signal !== undefined) return current.signal;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return undefined;
}

function signalLine(signal: FlowRun['signal']): string {
  if (signal === undefined) return 'signal: not decided';
  const strength =
    signal.signal_strength === undefined
      ? ''
      : ` (signal_strength ${signal.signal_strength} vs minSignalStrength ${String(signal.minSignalStrength)})`;
  return `signal: ${signal.status}${strength}${signal.signalId === undefined ? '' : ` ${signal.signalId}`}`;
}
