/**
 * `tda evaluate …`: walk-forward evaluations of recommendations through the orchestrator's
 * /evaluations API — flow 4 at each point of a range, then every recommendation scored against
 * the candles after its asOf.
 *
 * ```bash
 * tda evaluate recommendations BTC-USDT --from 2026-08-01T00:00:00Z --to 2026-09-05T00:00:00Z \
 *   --every 1w [--account demo] [--window 2] [--fee-bps 10] [--slippage-bps 0] --watch
 * tda evaluate show <evaluationId> [--points]     # state, counts, the table (and every point)
 * tda evaluate list [--limit 20] [--cursor C]
 * tda evaluate cancel <evaluationId>              # idempotent: no more runs, the active ones stop
 * ```
 *
 * `--watch` prints a line whenever the counts move and the table at the end; it exits 1 unless
 * the evaluation completed. `--json` prints the API's answer as it is.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from 'commander';
import type {
  EvaluationItem,
  EvaluationRequest,
  EvaluationRow,
  EvaluationView,
} from '@tda/contracts';
import { renderTable } from './accounts-commands';
import type { ApiClient } from './api-client';
import { CliError } from './cli-error';
import { normalizeAsOf } from './recommend-command';

export interface EvaluateCommandContext {
  io: {
    stdout: { write(text: string): boolean };
    /** Polling period of `--watch` (tests); default EVALUATE_POLL_MS. */
    watchIntervalMs?: number;
  };
  outcome: { exitCode: number };
  client(): ApiClient;
}

/** `--watch` polls this often: a point is a whole run of flow 4 (seconds to minutes). */
export const EVALUATE_POLL_MS = 2_000;
const WATCH_TIMEOUT_MS = 12 * 60 * 60_000;

function print(ctx: EvaluateCommandContext, lines: string[] | string): void {
  ctx.io.stdout.write(`${Array.isArray(lines) ? lines.join('\n') : lines}\n`);
}

const json = (value: unknown): string => JSON.stringify(value, null, 2);
const pct = (n: number | null | undefined): string =>
  n === null || n === undefined ? '—' : `${n >= 0 ? '+' : ''}${n.toFixed(2)}%`;
const rate = (n: number | null): string => (n === null ? '—' : `${n.toFixed(1)}%`);

function nonNegative(flag: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n < 0) {
      throw new CliError('INVALID_REQUEST', `${flag} must be a number >= 0 (got '${value}')`);
    }
    return n;
  };
}

function windowSize(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 10) {
    throw new CliError('INVALID_REQUEST', `--window must be an integer in 1..10 (got '${value}')`);
  }
  return n;
}

function period(value: string): string {
  if (!/^[1-9][0-9]{0,3}[mhdw]$/.test(value)) {
    throw new CliError(
      'INVALID_REQUEST',
      `--every must be a number and a unit m|h|d|w, e.g. 1d or 1w (got '${value}')`,
    );
  }
  return value;
}

interface CreateOptions {
  from: string;
  to: string;
  every: string;
  account: string;
  window?: number;
  feeBps?: number;
  slippageBps?: number;
  idempotencyKey?: string;
}

export function evaluationRequest(symbol: string, opts: CreateOptions): EvaluationRequest {
  return {
    symbol,
    from: normalizeAsOf(opts.from),
    to: normalizeAsOf(opts.to),
    every: opts.every,
    accountId: opts.account,
    ...(opts.window === undefined ? {} : { window: opts.window }),
    ...(opts.feeBps === undefined ? {} : { feeBps: opts.feeBps }),
    ...(opts.slippageBps === undefined ? {} : { slippageBps: opts.slippageBps }),
    ...(opts.idempotencyKey === undefined ? {} : { idempotencyKey: opts.idempotencyKey }),
  };
}

/** The table per provider/model/prompt (the point of the exercise). */
export function renderEvaluationTable(rows: readonly EvaluationRow[]): string {
  if (rows.length === 0) return '(no recommendation scored yet)';
  return renderTable(
    [
      'PROVIDER',
      'MODEL',
      'PROMPT',
      'RECOS',
      'TRADES',
      'HIT RATE',
      'MEAN',
      'MEDIAN',
      'MEAN MAE',
      'BUY&HOLD',
      'VS B&H',
    ],
    rows.map((r) => [
      r.provider,
      r.modelName,
      r.promptId,
      `${r.count}${r.pending > 0 ? ` (${r.pending} pending)` : ''}`,
      String(r.trades),
      rate(r.hitRatePct),
      pct(r.meanReturnPct),
      pct(r.medianReturnPct),
      pct(r.meanMaePct),
      pct(r.buyAndHoldMeanPct),
      pct(r.excessVsBuyAndHoldPct),
    ]),
  );
}

function countsLine(view: EvaluationView): string {
  const c = view.counts;
  return `${view.state}: ${c.points} points, ${c.triggered} started, ${c.active} active, ${c.succeeded} succeeded, ${c.failed} failed, ${c.cancelled} cancelled`;
}

export function renderEvaluation(view: EvaluationView): string {
  return [
    `evaluation ${view.evaluationId}  ${view.symbol}  ${view.from} → ${view.to} every ${view.every}`,
    `  window ${view.window}, costs ${view.costs.feeBps} bps fee + ${view.costs.slippageBps} bps slippage per side`,
    `  ${countsLine(view)}`,
    '',
    renderEvaluationTable(view.table),
  ].join('\n');
}

/** One line per recommendation (or per point without one): what it said and what happened. */
export function renderPoints(items: readonly EvaluationItem[]): string {
  const rows = items.flatMap((item) => {
    const base = [item.asOf, item.runStatus ?? (item.error === undefined ? 'waiting' : 'skipped')];
    const recos = item.recommendations ?? [];
    if (recos.length === 0) return [[...base, '', '', '', '', '', item.error ?? '']];
    return recos.map((r) => [
      ...base,
      r.action,
      r.score.status,
      r.score.hit === null || r.score.hit === undefined ? '—' : r.score.hit ? 'yes' : 'no',
      pct(r.score.returnPct),
      pct(r.score.maePct),
      r.score.exitReason ?? '',
    ]);
  });
  return renderTable(['AS OF', 'RUN', 'ACTION', 'SCORE', 'HIT', 'RETURN', 'MAE', 'EXIT'], rows);
}

async function follow(ctx: EvaluateCommandContext, api: ApiClient, id: string, asJson: boolean) {
  const interval = ctx.io.watchIntervalMs ?? EVALUATE_POLL_MS;
  const deadline = Date.now() + WATCH_TIMEOUT_MS;
  let last = '';
  for (;;) {
    const view = await api.getEvaluation(id);
    const line = countsLine(view);
    if (!asJson && line !== last) print(ctx, `  ${line}`);
    last = line;
    if (view.state !== 'running' || Date.now() > deadline) {
      print(
        ctx,
        asJson ? json(view) : ['', renderPoints(view.items), '', renderEvaluationTable(view.table)],
      );
      if (view.state !== 'completed') ctx.outcome.exitCode = 1;
      return;
    }
    await sleep(interval);
  }
}

function addCreateCommand(evaluate: Command, ctx: EvaluateCommandContext): void {
  evaluate
    .command('recommendations')
    .description(
      'walk-forward: flow 4 at each point of a range, each recommendation scored against what followed',
    )
    .argument('<symbol>', 'trading symbol, e.g. BTC-USDT')
    .requiredOption('--from <time>', 'the first asOf (RFC 3339)')
    .requiredOption('--to <time>', 'the last asOf at most (RFC 3339)')
    .requiredOption('--every <period>', 'between two asOfs: 4h, 1d, 1w, …', period)
    .option('-a, --account <accountId>', 'the account to size against', 'demo')
    .option('--window <n>', 'runs of it at once (1..10, default 2)', windowSize)
    .option(
      '--fee-bps <bps>',
      'fee per side when following a recommendation (default 10)',
      nonNegative('--fee-bps'),
    )
    .option('--slippage-bps <bps>', 'slippage per side (default 0)', nonNegative('--slippage-bps'))
    .option('-k, --idempotency-key <key>', 'the same key returns the existing evaluation')
    .option('-w, --watch', 'follow it until every point ended, then print the points and the table')
    .option('--json', 'print the evaluation as JSON')
    .action(async (symbol: string, opts: CreateOptions & { watch?: boolean; json?: boolean }) => {
      const api = ctx.client();
      const { evaluation, created } = await api.createEvaluation(evaluationRequest(symbol, opts));
      const what = created ? 'created evaluation' : 'existing evaluation (idempotency key)';
      if (opts.watch === true) {
        if (opts.json !== true) print(ctx, `${what} ${evaluation.evaluationId}`);
        await follow(ctx, api, evaluation.evaluationId, opts.json === true);
        return;
      }
      print(
        ctx,
        opts.json === true
          ? json(evaluation)
          : [`${what} ${evaluation.evaluationId}`, renderEvaluation(evaluation)],
      );
    });
}

/** `tda evaluate recommendations|show|list|cancel`. */
export function addEvaluateCommands(program: Command, ctx: EvaluateCommandContext): void {
  const evaluate = program
    .command('evaluate')
    .description('walk-forward evaluations: recommendations scored against what happened next');
  addCreateCommand(evaluate, ctx);
  evaluate
    .command('show')
    .description('an evaluation: state, counts, the table per provider/model/prompt')
    .argument('<evaluationId>')
    .option('--points', 'also every point: its run, the action and its score')
    .option('--json', 'print the evaluation as JSON')
    .action(async (id: string, opts: { points?: boolean; json?: boolean }) => {
      const view = await ctx.client().getEvaluation(id);
      if (opts.json === true) return print(ctx, json(view));
      print(
        ctx,
        opts.points === true
          ? [renderEvaluation(view), '', renderPoints(view.items)]
          : renderEvaluation(view),
      );
    });
  evaluate
    .command('list')
    .description('your evaluations, newest first')
    .option('--limit <n>', 'page size (1..100)', '20')
    .option('--cursor <cursor>', 'the nextCursor of a previous page')
    .option('--json', 'print the page as JSON')
    .action(async (opts: { limit: string; cursor?: string; json?: boolean }) => {
      const page = await ctx.client().listEvaluations({ limit: opts.limit, cursor: opts.cursor });
      if (opts.json === true) return print(ctx, json(page));
      print(
        ctx,
        renderTable(
          ['ID', 'SYMBOL', 'FROM', 'TO', 'EVERY', 'POINTS', 'CREATED'],
          page.items.map((e) => [
            e.evaluationId,
            e.symbol,
            e.from,
            e.to,
            e.every,
            String(e.points.length),
            e.createdAt,
          ]),
        ),
      );
      if (page.nextCursor !== null)
        print(
          ctx,
          `next page: tda evaluate list --limit ${opts.limit} --cursor ${page.nextCursor}`,
        );
    });
  evaluate
    .command('cancel')
    .description(
      'cancel an evaluation (idempotent): no more runs start, the active ones are cancelled',
    )
    .argument('<evaluationId>')
    .option('--json', 'print the evaluation as JSON')
    .action(async (id: string, opts: { json?: boolean }) => {
      const view = await ctx.client().cancelEvaluation(id);
      print(ctx, opts.json === true ? json(view) : `${view.evaluationId} ${countsLine(view)}`);
    });
}
