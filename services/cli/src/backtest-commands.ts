/**
 * `tda backtest …`: backtest jobs (seed 003, runs of flow backtest_v1) through the orchestrator's
 * /backtests/jobs API.
 *
 * ```bash
 * # a grid over fast × slow (stage A) and stop-loss × direction (stage B), followed to the end
 * tda backtest run BTC-USDT --strategy ma_cross --ma ema \
 *   --param fast=5,10,20 --param slow=50,100 --timeframe 1h --bars 5000 \
 *   --exec stopLossPct=0,2,5 --exec direction=long_only,long_short \
 *   --top-k 20 --preselect 200 --top-trades 3 --watch
 * tda backtest show <jobId>                     # state, stage progress, hashes
 * tda backtest top <jobId> [--limit 10] [--report] [--trades]
 * tda backtest list [--state running] [--limit 20] [--cursor C]
 * tda backtest cancel <jobId>                   # idempotent; a running job stops at a batch boundary
 * ```
 *
 * Strategies: ma_cross {fast, slow} (--ma ema|sma), rsi_reversion {period, lower, upper},
 * bollinger_breakout {period, k}, macd_cross {fast, slow, signal}. --exec fields: direction
 * (long_only,long_short), fraction, feeBps, slippageBps, stopLossPct, takeProfitPct,
 * trailingStopPct. `--json` prints the API's answer as it is. `run --watch` exits 1 unless the
 * job succeeded; a refused grid (422) prints one violation per line.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from 'commander';
import type {
  BacktestJob,
  BacktestJobState,
  BacktestStage,
  BacktestStrategyKind,
  BacktestTop,
  BacktestTopItem,
  BacktestTrade,
} from '@tda/contracts';
import { renderTable } from './accounts-commands';
import { ApiError, type ApiClient, type BacktestJobRequest } from './api-client';
import { CliError } from './cli-error';
import { normalizeAsOf } from './recommend-command';

/** What these commands need of the CLI (a structural slice of cli.ts's context). */
export interface BacktestCommandContext {
  io: {
    stdout: { write(text: string): boolean; isTTY?: boolean };
    stderr: { write(text: string): boolean };
    /** Polling period of `--watch` (tests); default BACKTEST_POLL_MS. */
    watchIntervalMs?: number;
  };
  outcome: { exitCode: number };
  client(): ApiClient;
}

/** `--watch` polls the job this often: progress moves by batches, a few per second at most. */
export const BACKTEST_POLL_MS = 500;
/** `--watch` gives up after this long (the job keeps going on the server). */
const WATCH_TIMEOUT_MS = 6 * 60 * 60_000;

const STRATEGY_KINDS: readonly BacktestStrategyKind[] = [
  'ma_cross',
  'rsi_reversion',
  'bollinger_breakout',
  'macd_cross',
];
const NUMERIC_EXEC_FIELDS = [
  'fraction',
  'feeBps',
  'slippageBps',
  'stopLossPct',
  'takeProfitPct',
  'trailingStopPct',
] as const;
const DIRECTIONS = ['long_only', 'long_short'] as const;
const STAGES: readonly BacktestStage[] = ['stage_a', 'stage_b', 'finalizing'];
const TERMINAL: readonly BacktestJobState[] = ['succeeded', 'failed', 'cancelled'];
const JOB_STATES: readonly BacktestJobState[] = ['queued', 'running', ...TERMINAL];

type Execution = NonNullable<BacktestJobRequest['execution']>;

function print(ctx: BacktestCommandContext, lines: string[] | string): void {
  ctx.io.stdout.write(`${Array.isArray(lines) ? lines.join('\n') : lines}\n`);
}

const json = (value: unknown): string => JSON.stringify(value, null, 2);

function invalid(message: string): CliError {
  return new CliError('INVALID_REQUEST', message);
}

/** `name=v1,v2,…` → [name, ['v1', 'v2', …]]. */
function splitAssignment(flag: string, value: string): [string, string[]] {
  const at = value.indexOf('=');
  const name = value.slice(0, at).trim();
  if (at < 0 || !/^[A-Za-z][A-Za-z0-9_]*$/.test(name)) {
    throw invalid(`${flag} must be name=v1,v2,… (e.g. ${flag} fast=5,10,20), got '${value}'`);
  }
  const values = value
    .slice(at + 1)
    .split(',')
    .map((v) => v.trim());
  if (values.some((v) => v === '')) {
    throw invalid(`${flag} ${name}: an empty value in '${value}'`);
  }
  return [name, values];
}

function numbers(flag: string, name: string, values: readonly string[]): number[] {
  return values.map((v) => {
    const n = Number(v);
    if (!Number.isFinite(n)) {
      throw invalid(`${flag} ${name}: '${v}' is not a number`);
    }
    return n;
  });
}

/** The `--param` flags as strategy.params (each name once). */
export function parseParams(given: readonly string[]): Record<string, number[]> {
  const params: Record<string, number[]> = {};
  for (const value of given) {
    const [name, values] = splitAssignment('--param', value);
    if (name in params) throw invalid(`--param ${name} is given twice; list its values once`);
    params[name] = numbers('--param', name, values);
  }
  return params;
}

/** The `--exec` flags as the execution lists (each field once). */
export function parseExecution(given: readonly string[]): Execution | undefined {
  if (given.length === 0) return undefined;
  const execution: Execution = {};
  for (const value of given) {
    const [name, values] = splitAssignment('--exec', value);
    if (name in execution) throw invalid(`--exec ${name} is given twice; list its values once`);
    if (name === 'direction') {
      const bad = values.find((v) => !(DIRECTIONS as readonly string[]).includes(v));
      if (bad !== undefined) {
        throw invalid(`--exec direction: '${bad}' is not ${DIRECTIONS.join(' or ')}`);
      }
      execution.direction = values as (typeof DIRECTIONS)[number][];
    } else if ((NUMERIC_EXEC_FIELDS as readonly string[]).includes(name)) {
      execution[name as (typeof NUMERIC_EXEC_FIELDS)[number]] = numbers('--exec', name, values);
    } else {
      throw invalid(`--exec ${name}: unknown field (direction, ${NUMERIC_EXEC_FIELDS.join(', ')})`);
    }
  }
  return execution;
}

function oneOf<T extends string>(flag: string, choices: readonly T[]) {
  return (value: string): T => {
    if (!(choices as readonly string[]).includes(value)) {
      throw invalid(`${flag} must be one of ${choices.join(', ')}, got '${value}'`);
    }
    return value as T;
  };
}

function integer(flag: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isInteger(n) || n < min || n > max) {
      throw invalid(`${flag} must be an integer in ${min}..${max}, got '${value}'`);
    }
    return n;
  };
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export interface RunOptions {
  strategy: BacktestStrategyKind;
  ma?: 'ema' | 'sma';
  param: string[];
  exec?: string[];
  timeframe?: string;
  bars?: number;
  asOf?: string;
  topK?: number;
  preselect?: number;
  topTrades?: number;
  idempotencyKey?: string;
}

/** The job request of `tda backtest run`'s flags (checked here before any request). */
export function backtestRequest(symbol: string, opts: RunOptions): BacktestJobRequest {
  const params = parseParams(opts.param);
  if (Object.keys(params).length === 0) {
    throw invalid('--param is required (e.g. --param fast=5,10,20 --param slow=50,100)');
  }
  const execution = parseExecution(opts.exec ?? []);
  return {
    symbol,
    ...(opts.timeframe === undefined ? {} : { timeframe: opts.timeframe }),
    ...(opts.asOf === undefined ? {} : { asOf: normalizeAsOf(opts.asOf) }),
    ...(opts.bars === undefined ? {} : { bars: opts.bars }),
    strategy: { kind: opts.strategy, ...(opts.ma === undefined ? {} : { ma: opts.ma }), params },
    ...(execution === undefined ? {} : { execution }),
    ...(opts.topK === undefined ? {} : { top_k: opts.topK }),
    ...(opts.preselect === undefined ? {} : { preselect: opts.preselect }),
    ...(opts.topTrades === undefined ? {} : { top_trades_n: opts.topTrades }),
    ...(opts.idempotencyKey === undefined ? {} : { idempotencyKey: opts.idempotencyKey }),
  };
}

/** One line per violation of a refused grid (422): `path  problem  (limit …, actual …)`. */
export function renderViolations(details: Record<string, unknown>): string[] {
  const violations = Array.isArray(details['violations']) ? details['violations'] : [];
  return violations.map((raw: unknown) => {
    const v = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
    const extra = [
      ...(v['limit'] === undefined ? [] : [`limit ${String(v['limit'])}`]),
      ...(v['actual'] === undefined ? [] : [`actual ${String(v['actual'])}`]),
      ...(Array.isArray(v['values']) ? [`values ${v['values'].map(String).join(', ')}`] : []),
    ];
    const tail = extra.length === 0 ? '' : `  (${extra.join(', ')})`;
    return `  ${String(v['path'] ?? '?')}  ${String(v['problem'] ?? '?')}${tail}`;
  });
}

const isTerminal = (job: BacktestJob): boolean => TERMINAL.includes(job.state);
const minute = (iso: string | undefined): string =>
  iso === undefined ? '—' : `${iso.slice(0, 19).replace('T', ' ')}Z`;

function progressText(job: BacktestJob): string {
  const p = job.progress;
  return p === undefined ? '' : `${p.stage} ${p.processed_units}/${p.total_units}`;
}

/** A job: state, current stage, times, error, hashes. */
export function renderJob(job: BacktestJob): string {
  const progress = progressText(job);
  const lines = [
    `${job.job_id}  ${job.state}  ${job.symbol} ${job.timeframe}${progress === '' ? '' : `  ${progress}`}`,
    `owner ${job.owner_id}  created ${minute(job.created_at)}  started ${minute(job.started_at)}  finished ${minute(job.finished_at)}`,
  ];
  if (job.as_of !== undefined) lines.push(`as of   ${job.as_of}`);
  if (job.cancel_requested_at !== undefined) {
    lines.push(`cancel requested ${minute(job.cancel_requested_at)}`);
  }
  if (job.last_error !== undefined) {
    const code = job.last_error_json === undefined ? '' : `${job.last_error_json.code}: `;
    lines.push(`error   ${code}${job.last_error}`);
  }
  lines.push(
    `request_hash                  ${job.hashes.request_hash}`,
    `engine_params_hash            ${job.hashes.engine_params_hash}`,
    `backtest_runtime_config_hash  ${job.hashes.backtest_runtime_config_hash}`,
  );
  return lines.join('\n');
}

export function renderJobList(jobs: readonly BacktestJob[]): string {
  if (jobs.length === 0) return 'no backtest jobs';
  return renderTable(
    ['JOB', 'STATE', 'SYMBOL', 'TF', 'PROGRESS', 'CREATED'],
    jobs.map((j) => [
      j.job_id,
      j.state,
      j.symbol,
      j.timeframe,
      progressText(j) || '—',
      minute(j.created_at),
    ]),
  );
}

/** What the watch knows of each stage: the newest counts seen, and whether it is over. */
export type StageMemory = Partial<Record<BacktestStage, { processed: number; total: number }>>;

/** Folds a polled job into the memory: its stage's counts, every earlier stage complete. */
export function remember(memory: StageMemory, job: BacktestJob): StageMemory {
  const next: StageMemory = { ...memory };
  const current = job.progress?.stage ?? job.stage;
  const upTo = job.state === 'succeeded' ? STAGES.length : STAGES.indexOf(current ?? 'stage_a');
  for (const stage of STAGES.slice(0, upTo)) {
    const seen = next[stage];
    const total = seen?.total ?? 0;
    next[stage] = { processed: total, total };
  }
  if (job.progress !== undefined && job.state !== 'succeeded') {
    next[job.progress.stage] = {
      processed: job.progress.processed_units,
      total: job.progress.total_units,
    };
  }
  return next;
}

const BAR_WIDTH = 24;

/** One bar line per stage: `stage_b     [#####-----]  120/300   40%`, or pending. */
export function renderStages(memory: StageMemory, job: BacktestJob): string[] {
  const done = STAGES.indexOf(job.progress?.stage ?? job.stage ?? 'stage_a');
  return STAGES.map((stage, i) => {
    const seen = memory[stage];
    const over = job.state === 'succeeded' || i < done;
    if (seen === undefined && !over)
      return `${stage.padEnd(11)} [${' '.repeat(BAR_WIDTH)}]  pending`;
    const { processed, total } = seen ?? { processed: 0, total: 0 };
    const ratio = over ? 1 : total === 0 ? 0 : Math.min(processed / total, 1);
    const filled = Math.round(ratio * BAR_WIDTH);
    const bar = `${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}`;
    const counts = total === 0 && over ? 'done' : `${processed}/${total}`;
    return `${stage.padEnd(11)} [${bar}]  ${counts.padStart(13)}  ${String(Math.floor(ratio * 100)).padStart(3)}%`;
  });
}

/** Draws a frame: in place on a TTY, else only when it changed (a log stays short). */
function drawer(out: BacktestCommandContext['io']['stdout']): (lines: string[]) => void {
  let drawn = 0;
  let last = '';
  return (lines) => {
    const block = lines.join('\n');
    if (out.isTTY === true) {
      if (drawn > 0) out.write(`\u001b[${drawn}F\u001b[0J`);
      out.write(`${block}\n`);
      drawn = lines.length;
    } else if (block !== last) {
      out.write(`${block}\n\n`);
    }
    last = block;
  };
}

/**
 * Polls the job until it is terminal, drawing one progress bar per stage (nothing with `quiet`,
 * for --json); returns the final job.
 */
export async function watchBacktest(
  ctx: BacktestCommandContext,
  api: ApiClient,
  jobId: string,
  quiet: boolean,
): Promise<BacktestJob> {
  const draw = quiet ? () => undefined : drawer(ctx.io.stdout);
  const stop = AbortSignal.timeout(WATCH_TIMEOUT_MS);
  let memory: StageMemory = {};
  let job = await api.getBacktestJob(jobId);
  for (;;) {
    memory = remember(memory, job);
    draw([`${job.job_id}  ${job.state}`, ...renderStages(memory, job)]);
    if (isTerminal(job) || stop.aborted) break;
    await sleep(ctx.io.watchIntervalMs ?? BACKTEST_POLL_MS, undefined, { signal: stop }).catch(
      () => undefined,
    );
    job = await api.getBacktestJob(jobId);
  }
  if (!isTerminal(job)) {
    throw new CliError('CONFLICT', `backtest job ${jobId} is still ${job.state} after the watch`);
  }
  return job;
}

const fixed = (n: number, digits = 2): string => n.toFixed(digits);

/** `ma_cross:ema:fast=5,slow=50|direction=long_only,…` → the parts that tell rows apart. */
export function shortVariantKeys(items: readonly BacktestTopItem[]): {
  keys: string[];
  common: string;
} {
  const split = items.map((item) => {
    const [base = '', exec = ''] = item.variant_key.split('|');
    const strategy = base.split(':').slice(1).join(':');
    return { strategy, exec: exec === '' ? [] : exec.split(',') };
  });
  const fields = split[0]?.exec ?? [];
  const varying = new Set(
    fields.filter((f) => !split.every((s) => s.exec.includes(f))).map((f) => f.split('=')[0]),
  );
  for (const s of split) {
    for (const f of s.exec) if (!fields.includes(f)) varying.add(f.split('=')[0]);
  }
  const keys = split.map(({ strategy, exec }) => {
    const shown = exec.filter((f) => varying.has(f.split('=')[0]));
    return shown.length === 0 ? strategy : `${strategy} | ${shown.join(',')}`;
  });
  const common = fields.filter((f) => !varying.has(f.split('=')[0])).join(', ');
  return { keys, common };
}

export function renderTop(top: BacktestTop): string {
  const progress =
    top.stage === undefined
      ? ''
      : ` (${top.stage} ${top.processed_units ?? 0}/${top.total_units ?? 0})`;
  const head = `${top.job_id}  ${top.state}  top: ${top.source.replaceAll('_', ' ')}${progress}`;
  if (top.items.length === 0) return `${head}\nno variants yet`;
  const { keys, common } = shortVariantKeys(top.items);
  const kind = top.items[0]?.strategy.kind ?? '';
  const table = renderTable(
    ['RANK', `VARIANT (${kind})`, 'RETURN %', 'MAX DD %', 'SHARPE', 'WIN %', 'TRADES'],
    top.items.map((item, i) => [
      String(item.rank),
      keys[i] ?? item.variant_key,
      fixed(item.metrics.total_return_pct),
      fixed(item.metrics.max_drawdown_pct),
      fixed(item.metrics.sharpe),
      fixed(item.metrics.win_rate_pct, 1),
      String(item.metrics.trades),
    ]),
  );
  return [head, table, ...(common === '' ? [] : [`every variant: ${common}`])].join('\n');
}

function renderTrades(trades: readonly BacktestTrade[]): string {
  if (trades.length === 0) return 'no trades';
  return renderTable(
    ['SIDE', 'ENTRY', 'PRICE', 'EXIT', 'PRICE', 'PNL', 'REASON'],
    trades.map((t) => [
      t.side,
      minute(t.entryTime),
      String(t.entryPrice),
      minute(t.exitTime),
      String(t.exitPrice),
      t.pnl.toFixed(4),
      t.reason,
    ]),
  );
}

/** The top table, then each variant's report table and/or trades when asked. */
export function renderTopDetails(
  top: BacktestTop,
  opts: { report?: boolean; trades?: boolean },
): string {
  const parts = [renderTop(top)];
  for (const item of top.items) {
    const report = opts.report === true ? item.report_table_md : undefined;
    const trades = opts.trades === true ? item.trades : undefined;
    if (report === undefined && trades === undefined) continue;
    parts.push('', `#${item.rank} ${item.variant_key}`);
    if (report !== undefined) parts.push(report.trimEnd());
    if (trades !== undefined) parts.push(renderTrades(trades));
  }
  const asked = opts.report === true || opts.trades === true;
  if (asked && parts.length === 1 && top.items.length > 0) {
    parts.push(
      top.state === 'succeeded'
        ? '(no report tables or trades in this answer)'
        : '(report tables and trades exist only once the job succeeded)',
    );
  }
  return parts.join('\n');
}

/** POST the job; a 422 prints every violation (exit 1) and returns undefined. */
async function createJob(
  ctx: BacktestCommandContext,
  api: ApiClient,
  request: BacktestJobRequest,
): Promise<{ job: BacktestJob; created: boolean } | undefined> {
  try {
    return await api.createBacktestJob(request);
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== 'VALIDATION_FAILED') throw error;
    const lines = renderViolations(error.details);
    ctx.io.stderr.write(
      `error VALIDATION_FAILED (HTTP ${error.status}): the backtest request was refused${lines.length === 0 ? `: ${error.message}` : ''}\n`,
    );
    if (lines.length > 0) ctx.io.stderr.write(`${lines.join('\n')}\n`);
    ctx.outcome.exitCode = 1;
    return undefined;
  }
}

/** Follows a created job to its end, then its top; exit code 1 unless it succeeded. */
async function followJob(
  ctx: BacktestCommandContext,
  api: ApiClient,
  jobId: string,
  asJson: boolean,
): Promise<void> {
  const job = await watchBacktest(ctx, api, jobId, asJson);
  const top = await api.backtestTop(jobId);
  if (asJson) {
    print(ctx, json({ job, top }));
  } else {
    if (job.last_error !== undefined) print(ctx, `error: ${job.last_error}`);
    print(ctx, renderTop(top));
  }
  if (job.state !== 'succeeded') ctx.outcome.exitCode = 1;
}

function addRunCommand(backtest: Command, ctx: BacktestCommandContext): void {
  backtest
    .command('run')
    .description('create a backtest job over a parameter grid (flow backtest_v1)')
    .argument('<symbol>', 'trading symbol, e.g. BTC-USDT')
    .requiredOption(
      '--strategy <kind>',
      STRATEGY_KINDS.join(' | '),
      oneOf('--strategy', STRATEGY_KINDS),
    )
    .option('--ma <kind>', 'ma_cross moving average: ema | sma', oneOf('--ma', ['ema', 'sma']))
    .option('--param <name=v1,v2>', 'a strategy parameter and its values (repeat)', collect, [])
    .option('--exec <field=v1,v2>', 'an execution field and its values (repeat)', collect, [])
    .option('-t, --timeframe <tf>', 'candle timeframe (default 1h)')
    .option('--bars <n>', 'candles to run over', integer('--bars', 1))
    .option('--as-of <time>', 'the last candle time (RFC 3339); default: the newest')
    .option('--top-k <n>', 'variants kept', integer('--top-k', 1))
    .option('--preselect <n>', 'base variants stage A keeps for stage B', integer('--preselect', 1))
    .option('--top-trades <n>', 'best variants whose trades are kept', integer('--top-trades', 0))
    .option('-k, --idempotency-key <key>', 'the same key returns the existing job')
    .option('-w, --watch', 'follow the job until it ends, then print its top variants')
    .option('--json', 'print the job (with --watch: {job, top} at the end) as JSON')
    .action(async (symbol: string, opts: RunOptions & { watch?: boolean; json?: boolean }) => {
      const request = backtestRequest(symbol, opts);
      const api = ctx.client();
      const answer = await createJob(ctx, api, request);
      if (answer === undefined) return;
      const { job, created } = answer;
      if (opts.watch === true) {
        if (opts.json !== true) print(ctx, `${created ? 'created' : 'existing job'} ${job.job_id}`);
        await followJob(ctx, api, job.job_id, opts.json === true);
        return;
      }
      print(
        ctx,
        opts.json === true
          ? json(job)
          : [
              `${created ? 'created backtest job' : 'existing backtest job (idempotency key)'} ${job.job_id}`,
              renderJob(job),
            ],
      );
    });
}

function addReadCommands(backtest: Command, ctx: BacktestCommandContext): void {
  backtest
    .command('show')
    .description('a backtest job: state, stage progress, hashes, error')
    .argument('<jobId>')
    .option('--json', 'print the job as JSON')
    .action(async (jobId: string, opts: { json?: boolean }) => {
      const job = await ctx.client().getBacktestJob(jobId);
      print(ctx, opts.json === true ? json(job) : renderJob(job));
    });
  backtest
    .command('top')
    .description("a job's best variants: the result once succeeded, else the best so far")
    .argument('<jobId>')
    .option('--limit <n>', 'at most this many variants', integer('--limit', 1, 1000))
    .option('--report', "print each variant's report table (succeeded jobs)")
    .option('--trades', 'print the trades of the variants that have them (succeeded jobs)')
    .option('--json', 'print the answer as JSON')
    .action(
      async (
        jobId: string,
        opts: { limit?: number; report?: boolean; trades?: boolean; json?: boolean },
      ) => {
        const top = await ctx.client().backtestTop(jobId, opts.limit);
        print(ctx, opts.json === true ? json(top) : renderTopDetails(top, opts));
      },
    );
  backtest
    .command('list')
    .description('your backtest jobs, newest first')
    .option('--state <state>', JOB_STATES.join(' | '), oneOf('--state', JOB_STATES))
    .option('--limit <n>', 'page size (1..100)', integer('--limit', 1, 100), 20)
    .option('--cursor <cursor>', 'the next_cursor of a previous page')
    .option('--json', 'print the page as JSON')
    .action(async (opts: { state?: string; limit: number; cursor?: string; json?: boolean }) => {
      const page = await ctx
        .client()
        .listBacktestJobs({ state: opts.state, limit: opts.limit, cursor: opts.cursor });
      if (opts.json === true) {
        print(ctx, json(page));
        return;
      }
      print(ctx, renderJobList(page.items));
      if (page.next_cursor !== null) {
        const state = opts.state === undefined ? '' : ` --state ${opts.state}`;
        print(
          ctx,
          `next page: tda backtest list${state} --limit ${opts.limit} --cursor ${shellWord(page.next_cursor)}`,
        );
      }
    });
}

/** `value` as one POSIX shell word (as in `tda list`'s next-page line). */
function shellWord(value: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

/** `tda backtest run|show|top|list|cancel`. */
export function addBacktestCommands(program: Command, ctx: BacktestCommandContext): void {
  const backtest = program
    .command('backtest')
    .description('backtest jobs: a strategy parameter grid over candles (seed 003)');
  addRunCommand(backtest, ctx);
  addReadCommands(backtest, ctx);
  backtest
    .command('cancel')
    .description('cancel a backtest job (idempotent; a running job stops at a batch boundary)')
    .argument('<jobId>')
    .option('--json', 'print the job as JSON')
    .action(async (jobId: string, opts: { json?: boolean }) => {
      const job = await ctx.client().cancelBacktestJob(jobId);
      if (opts.json === true) {
        print(ctx, json(job));
        return;
      }
      const pending = isTerminal(job) ? '' : ' (cancel requested; it stops at a batch boundary)';
      print(ctx, `${job.job_id} ${job.state}${pending}`);
    });
}
