import type { Command } from 'commander';
import type { FlowScheduleRequest, ScheduleFire, Signal } from '@tda/contracts';
import { renderTable } from './accounts-commands';
import { ApiError, type ApiClient, type ScheduleView } from './api-client';
import { CliError } from './cli-error';
import { terminalText } from './recommendation-view';

/** What these commands need of the CLI (a structural slice of cli.ts's context). */
export interface ScheduleCommandContext {
  io: { stdout: { write(text: string): boolean } };
  client(): ApiClient;
  /** Follows a run to its end like `tda run --watch` (sets the exit code). */
  follow(api: ApiClient, runId: string): Promise<void>;
}

function print(ctx: ScheduleCommandContext, lines: string[] | string): void {
  ctx.io.stdout.write(`${Array.isArray(lines) ? lines.join('\n') : lines}\n`);
}

/** The request schema's cron shape (5 fields); the server checks the fields themselves. */
const CRON_SHAPE = /^[ \t]*[0-9A-Za-z*,/-]+([ \t]+[0-9A-Za-z*,/-]+){4}[ \t]*$/;
const SCHEDULE_ID = /^sch_[a-z0-9]{20}$/;

function parseCron(value: string): string {
  if (!CRON_SHAPE.test(value) || value.length > 100) {
    throw new CliError(
      'INVALID_REQUEST',
      `--cron must be 5 fields (minute hour day-of-month month day-of-week), e.g. '*/15 * * * *', got '${value}'`,
    );
  }
  return value
    .trim()
    .split(/[ \t]+/)
    .join(' ');
}

/** An IANA name the runtime knows (the server resolves it the same way). */
function parseTimeZone(value: string): string {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
    return value;
  } catch {
    throw new CliError(
      'INVALID_REQUEST',
      `--tz must be an IANA time zone such as UTC or Europe/London, got '${value}'`,
    );
  }
}

function oneOf<T extends string>(flag: string, choices: readonly T[]) {
  return (value: string): T => {
    if (!(choices as readonly string[]).includes(value)) {
      throw new CliError(
        'INVALID_REQUEST',
        `${flag} must be ${choices.join(' or ')}, got '${value}'`,
      );
    }
    return value as T;
  };
}

function parseStrength(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !(n >= 0 && n <= 1)) {
    throw new CliError('INVALID_REQUEST', `--min-signal must be a number in 0..1, got '${value}'`);
  }
  return n;
}

function parseLimit(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 100) {
    throw new CliError('INVALID_REQUEST', `--limit must be an integer in 1..100, got '${value}'`);
  }
  return n;
}

function parseDescription(value: string): string {
  if (value.length > 200) {
    throw new CliError('INVALID_REQUEST', '--description must be at most 200 characters');
  }
  return value;
}

/** A past slot for `fire --slot`: RFC 3339, sent as UTC (…Z). */
function parseSlot(value: string): string {
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) {
    throw new CliError(
      'INVALID_REQUEST',
      `--slot must be an RFC 3339 time such as 2026-09-21T08:00:00Z, got '${value}'`,
    );
  }
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

function checkScheduleId(scheduleId: string): string {
  if (!SCHEDULE_ID.test(scheduleId)) {
    throw new CliError(
      'INVALID_REQUEST',
      `'${scheduleId}' is not a schedule id (sch_ and 20 letters or digits; see tda schedule list)`,
    );
  }
  return scheduleId;
}

/** A 404 of a schedule route says which schedule and what to do; anything else as it is. */
async function ofSchedule<T>(scheduleId: string, call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      throw new ApiError(
        404,
        'NOT_FOUND',
        `no schedule ${scheduleId} of yours (deleted, another owner's, or never created; see tda schedule list)`,
      );
    }
    throw error;
  }
}

/** `value` as one POSIX shell word (as in `tda list`'s next-page line). */
function shellWord(value: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

const minute = (iso: string): string => `${iso.slice(0, 16).replace('T', ' ')}Z`;

/** "2026-09-21 07:00Z (08:00 Europe/London)": the instant, and the wall time the cron reads. */
export function slotText(iso: string, timeZone: string): string {
  const at = Date.parse(iso);
  if (Number.isNaN(at) || timeZone === 'UTC') return Number.isNaN(at) ? iso : minute(iso);
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(at);
  const part = (type: string): string => parts.find((p) => p.type === type)?.value ?? '';
  const local = `${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')}`;
  return `${minute(new Date(at).toISOString())} (${local} ${timeZone})`;
}

function fireText(fire: ScheduleFire | undefined): string {
  if (fire === undefined) return '—';
  return `${fire.outcome} ${minute(fire.slotAt)}`;
}

function nextOf(schedule: ScheduleView): string | undefined {
  if (!schedule.enabled) return undefined;
  return schedule.nextFireTimes?.[0] ?? schedule.nextSlotAt;
}

export function renderScheduleList(schedules: readonly ScheduleView[]): string {
  if (schedules.length === 0) return 'no schedules';
  return renderTable(
    ['ID', 'FLOW', 'SYMBOL', 'CRON', 'TZ', 'ENABLED', 'NEXT', 'LAST FIRE', 'MIN SIGNAL'],
    schedules.map((s) => {
      const next = nextOf(s);
      return [
        s.scheduleId,
        s.flowKey,
        s.scope.symbol,
        s.cron,
        s.timeZone,
        s.enabled ? 'yes' : 'paused',
        next === undefined ? '—' : minute(next),
        fireText(s.lastFire),
        s.minSignalStrength === undefined ? '—' : String(s.minSignalStrength),
      ];
    }),
  );
}

function scopeText(scope: ScheduleView['scope']): string {
  return Object.entries(scope)
    .map(
      ([k, v]) =>
        `${k} ${Array.isArray(v) ? v.join(',') : typeof v === 'string' ? v : JSON.stringify(v)}`,
    )
    .join(', ');
}

function lastFireLines(schedule: ScheduleView): string[] {
  const fire = schedule.lastFire;
  if (fire === undefined) return ['last fire   none yet'];
  const run = fire.runId === undefined ? '' : ` → run ${fire.runId}`;
  const missed =
    fire.missedCount === undefined || fire.missedCount === 0
      ? ''
      : `, ${fire.missedCount} older slot(s) missed`;
  const lines = [
    `last fire   ${fire.outcome} slot ${slotText(fire.slotAt, schedule.timeZone)}${run}`,
    `            decided ${minute(fire.at)}${missed}`,
  ];
  if (fire.reason !== undefined)
    lines.push(`            reason: ${terminalText(fire.reason, 200)}`);
  return lines;
}

/** A schedule with every field, its last fire and its next fire times. */
export function renderSchedule(schedule: ScheduleView): string {
  const next = schedule.nextFireTimes ?? [];
  const lines = [
    `${schedule.scheduleId}  ${schedule.flowKey}  ${schedule.scope.symbol}  (${schedule.enabled ? 'enabled' : 'paused'})`,
    ...(schedule.description === undefined
      ? []
      : [`description ${terminalText(schedule.description, 200)}`]),
    `cron        ${schedule.cron}  (${schedule.timeZone})`,
    `scope       ${scopeText(schedule.scope)}`,
    `policies    catch-up ${schedule.catchUp}, overlap ${schedule.overlap}`,
    `signals     ${schedule.minSignalStrength === undefined ? 'none (no minimum signal strength)' : `signal_strength >= ${schedule.minSignalStrength}`}`,
    `owner       ${schedule.ownerId}  created ${schedule.createdAt}  updated ${schedule.updatedAt}`,
    ...lastFireLines(schedule),
  ];
  if (!schedule.enabled) {
    lines.push('next fires  none while paused (tda schedule resume)');
  } else if (next.length === 0) {
    lines.push(
      `next fires  ${schedule.nextSlotAt === undefined ? '—' : slotText(schedule.nextSlotAt, schedule.timeZone)}`,
    );
  } else {
    next.forEach((at, i) =>
      lines.push(`${i === 0 ? 'next fires ' : '           '} ${slotText(at, schedule.timeZone)}`),
    );
  }
  return lines.join('\n');
}

export function renderSignalList(signals: readonly Signal[]): string {
  if (signals.length === 0) return 'no signals';
  return renderTable(
    ['TIME', 'SYMBOL', 'ACTION', 'STRENGTH', 'MIN', 'SCHEDULE', 'RUN', 'HEADLINE'],
    signals.map((s) => [
      minute(s.createdAt),
      s.symbol,
      s.action,
      s.signal_strength.toFixed(2),
      s.minSignalStrength.toFixed(2),
      s.scheduleId,
      s.runId,
      terminalText(s.headline, 80),
    ]),
  );
}

interface CreateOptions {
  symbol: string;
  cron: string;
  tz?: string;
  account?: string;
  timeframes?: string;
  minSignal?: number;
  catchUp?: 'skip' | 'latest';
  overlap?: 'skip' | 'allow';
  paused?: boolean;
  description?: string;
}

function createRequest(flowKey: string, opts: CreateOptions): FlowScheduleRequest {
  const timeframes = opts.timeframes
    ?.split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  return {
    flowKey,
    scope: {
      symbol: opts.symbol,
      ...(opts.account === undefined ? {} : { accountId: opts.account }),
      ...(timeframes === undefined || timeframes.length === 0
        ? {}
        : { timeframes: timeframes as never }),
    },
    cron: opts.cron,
    ...(opts.tz === undefined ? {} : { timeZone: opts.tz }),
    ...(opts.paused === true ? { enabled: false } : {}),
    ...(opts.catchUp === undefined ? {} : { catchUp: opts.catchUp }),
    ...(opts.overlap === undefined ? {} : { overlap: opts.overlap }),
    ...(opts.minSignal === undefined ? {} : { minSignalStrength: opts.minSignal }),
    ...(opts.description === undefined ? {} : { description: opts.description }),
  };
}

/** `tda schedule create|list|show|pause|resume|delete|fire` and `tda signals`. */
export function addScheduleCommands(program: Command, ctx: ScheduleCommandContext): void {
  const schedule = program
    .command('schedule')
    .description('run a flow on a cron schedule (flow 7); its runs can emit signals');
  schedule
    .command('create')
    .description('create a schedule of a flow; prints it with its next fire times')
    .argument('<flowKey>', 'e.g. recommendation_with_account_v1 (see `tda flows`)')
    .requiredOption('-s, --symbol <symbol>', 'trading symbol, e.g. BTC-USDT')
    .requiredOption('--cron <expr>', "5-field cron, e.g. '0 8 * * 1-5'", parseCron)
    .option('--tz <iana>', 'the time zone the cron is read in (default UTC)', parseTimeZone)
    .option('-a, --account <accountId>', 'the account to size against (flows that take one)')
    .option('-t, --timeframes <list>', 'comma-separated timeframes (flows that take them)')
    .option('--min-signal <0..1>', 'emit a signal when signal_strength reaches this', parseStrength)
    .option(
      '--catch-up <policy>',
      'missed slots: skip or latest (default skip)',
      oneOf('--catch-up', ['skip', 'latest']),
    )
    .option(
      '--overlap <policy>',
      'previous run still active: skip or allow (default skip)',
      oneOf('--overlap', ['skip', 'allow']),
    )
    .option('--paused', 'create it paused (resume with tda schedule resume)')
    .option(
      '--description <text>',
      'free text shown in lists (at most 200 characters)',
      parseDescription,
    )
    .option('--json', 'print the schedule as JSON')
    .action(async (flowKey: string, opts: CreateOptions & { json?: boolean }) => {
      const created = await ctx.client().createSchedule(createRequest(flowKey, opts));
      print(
        ctx,
        opts.json === true
          ? JSON.stringify(created, null, 2)
          : [`created ${created.scheduleId}`, renderSchedule(created)],
      );
    });
  addReadCommands(schedule, ctx);
  addChangeCommands(schedule, ctx);
  addSignalsCommand(program, ctx);
}

function addReadCommands(schedule: Command, ctx: ScheduleCommandContext): void {
  schedule
    .command('list')
    .description('your schedules, newest first')
    .option('--limit <n>', 'page size (1..100)', parseLimit, 20)
    .option('--cursor <cursor>', 'the nextCursor of a previous page')
    .option('--json', 'print the page as JSON')
    .action(async (opts: { limit: number; cursor?: string; json?: boolean }) => {
      const page = await ctx.client().listSchedules({
        limit: opts.limit,
        ...(opts.cursor === undefined ? {} : { cursor: opts.cursor }),
      });
      if (opts.json === true) {
        print(ctx, JSON.stringify(page, null, 2));
        return;
      }
      print(ctx, renderScheduleList(page.schedules));
      if (page.nextCursor !== null) {
        print(
          ctx,
          `next page: tda schedule list --limit ${opts.limit} --cursor ${shellWord(page.nextCursor)}`,
        );
      }
    });
  schedule
    .command('show')
    .description('a schedule: every field, its last fire and its next 5 fire times')
    .argument('<scheduleId>')
    .option('--json', 'print the schedule as JSON')
    .action(async (scheduleId: string, opts: { json?: boolean }) => {
      const id = checkScheduleId(scheduleId);
      const found = await ofSchedule(id, ctx.client().getSchedule(id));
      print(ctx, opts.json === true ? JSON.stringify(found, null, 2) : renderSchedule(found));
    });
}

function addChangeCommands(schedule: Command, ctx: ScheduleCommandContext): void {
  for (const action of ['pause', 'resume'] as const) {
    schedule
      .command(action)
      .description(
        action === 'pause'
          ? 'pause a schedule (no slot fires while paused)'
          : 'resume a schedule from now (the paused slots are not caught up)',
      )
      .argument('<scheduleId>')
      .action(async (scheduleId: string) => {
        const id = checkScheduleId(scheduleId);
        const changed = await ofSchedule(id, ctx.client().setScheduleState(id, action));
        const next = nextOf(changed);
        print(
          ctx,
          `${changed.scheduleId} ${changed.enabled ? 'enabled' : 'paused'}${next === undefined ? '' : `; next fire ${slotText(next, changed.timeZone)}`}`,
        );
      });
  }
  schedule
    .command('delete')
    .description('delete a schedule (its runs and signals stay)')
    .argument('<scheduleId>')
    .action(async (scheduleId: string) => {
      const id = checkScheduleId(scheduleId);
      await ofSchedule(id, ctx.client().deleteSchedule(id));
      print(ctx, `deleted ${id}`);
    });
  schedule
    .command('fire')
    .description(
      'fire a schedule now (this minute) or, with --slot, a past fire time (backfill): one run per slot',
    )
    .argument('<scheduleId>')
    .option(
      '--slot <rfc3339>',
      'a past fire time of the cron expression, e.g. 2026-09-21T08:00:00Z',
      parseSlot,
    )
    .option('-w, --watch', 'follow the run until it finishes')
    .option('--json', 'print the answer as JSON')
    .action(
      async (scheduleId: string, opts: { slot?: string; watch?: boolean; json?: boolean }) => {
        const id = checkScheduleId(scheduleId);
        const api = ctx.client();
        const fired = await ofSchedule(id, api.fireSchedule(id, opts.slot));
        if (opts.json === true && opts.watch !== true) {
          print(ctx, JSON.stringify(fired, null, 2));
          return;
        }
        print(
          ctx,
          fired.created
            ? `fired ${fired.scheduleId} slot ${minute(fired.slotAt)}: run ${fired.runId}`
            : `slot ${minute(fired.slotAt)} of ${fired.scheduleId} had been fired before: run ${fired.runId}`,
        );
        if (opts.watch === true) await ctx.follow(api, fired.runId);
      },
    );
}

function addSignalsCommand(program: Command, ctx: ScheduleCommandContext): void {
  program
    .command('signals')
    .description('signals your schedules emitted, newest first')
    .option('--symbol <symbol>', 'only this pair, any spelling (BTC-USDT, btc/usdt)')
    .option('--limit <n>', 'page size (1..100)', parseLimit, 20)
    .option('--cursor <cursor>', 'the nextCursor of a previous page')
    .option('--json', 'print the page as JSON')
    .action(async (opts: { symbol?: string; limit: number; cursor?: string; json?: boolean }) => {
      const page = await ctx.client().listSignals({
        symbol: opts.symbol,
        limit: opts.limit,
        cursor: opts.cursor,
      });
      if (opts.json === true) {
        print(ctx, JSON.stringify(page, null, 2));
        return;
      }
      print(ctx, renderSignalList(page.signals));
      if (page.nextCursor !== null) {
        const symbol = opts.symbol === undefined ? '' : ` --symbol ${shellWord(opts.symbol)}`;
        const cursor = shellWord(page.nextCursor);
        print(ctx, `next page: tda signals${symbol} --limit ${opts.limit} --cursor ${cursor}`);
      }
    });
}
