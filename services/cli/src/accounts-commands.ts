import type { Command } from 'commander';
import type { Account, PaperPosition } from '@tda/contracts';
import { ApiError, type AccountChangesBody, type ApiClient } from './api-client';
import { CliError } from './cli-error';

/** What the account commands need of the CLI: the terminal and the API client. */
export interface AccountsCliContext {
  io: { stdout: { write(text: string): boolean } };
  client(): ApiClient;
}

/** Read → decide → conditional write rounds of a position change before giving up. */
const WRITE_ATTEMPTS = 3;

function print(ctx: AccountsCliContext, lines: string[] | string): void {
  ctx.io.stdout.write(`${Array.isArray(lines) ? lines.join('\n') : lines}\n`);
}

function number(flag: string, min: number, max = Number.POSITIVE_INFINITY) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n < min || n > max) {
      throw new CliError(
        'INVALID_REQUEST',
        `${flag} must be a number${max === Number.POSITIVE_INFINITY ? ` >= ${min}` : ` in ${min}..${max}`}, got '${value}'`,
      );
    }
    return n;
  };
}

function positiveNumber(flag: string) {
  return (value: string): number => {
    const n = number(flag, 0)(value);
    if (n === 0) throw new CliError('INVALID_REQUEST', `${flag} must be above 0`);
    return n;
  };
}

/** The same market whatever the spelling: BTC-USDT, btc/usdt, BTCUSDT. */
function sameMarket(a: string, b: string): boolean {
  const key = (s: string): string => s.toUpperCase().replace(/[/-]/g, '');
  return key(a) === key(b);
}

/** A compact table: columns padded to their widest cell, two spaces apart. */
export function renderTable(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(head), ...rows.map(line)].join('\n');
}

const amount = (n: number): string => n.toLocaleString('en-US', { maximumFractionDigits: 8 });

export function renderAccountList(accounts: readonly Account[]): string {
  if (accounts.length === 0) return 'no accounts';
  return renderTable(
    ['ACCOUNT', 'NAME', 'CASH', 'POSITIONS', 'MAX POSITION', 'SOURCE'],
    accounts.map((a) => [
      a.accountId,
      a.name,
      a.exchange === undefined ? `${amount(a.cash)} ${a.quoteCurrency}` : `— ${a.quoteCurrency}`,
      a.exchange === undefined ? String(a.positions.length) : '—',
      `${amount(a.riskLimits.maxPositionFraction * 100)}%`,
      a.exchange === undefined ? 'paper' : `exchange ${a.exchange}`,
    ]),
  );
}

export function renderAccount(account: Account): string {
  const { riskLimits } = account;
  const limits = [
    `max position ${amount(riskLimits.maxPositionFraction * 100)}% of equity`,
    ...(riskLimits.maxRiskPerTradeFraction === undefined
      ? []
      : [`max risk per trade ${amount(riskLimits.maxRiskPerTradeFraction * 100)}%`]),
  ].join(', ');
  const lines = [
    `${account.accountId}  ${account.name}  (${account.exchange === undefined ? 'paper' : `live exchange account: ${account.exchange}`})`,
    `owner ${account.ownerId}  updated ${account.updatedAt}`,
    `risk limits: ${limits}`,
  ];
  if (account.exchange !== undefined) {
    lines.push('cash and positions come from the exchange when a run exports the account');
    return lines.join('\n');
  }
  lines.push(`cash: ${amount(account.cash)} ${account.quoteCurrency}`);
  if (account.positions.length === 0) {
    lines.push('no positions');
  } else {
    lines.push(
      renderTable(
        ['SYMBOL', 'SIDE', 'SIZE', 'ENTRY', 'OPENED'],
        account.positions.map((p) => [
          p.symbol,
          p.side,
          amount(p.size),
          amount(p.averageEntry),
          p.openedAt ?? '—',
        ]),
      ),
    );
  }
  return lines.join('\n');
}

/**
 * Changes an account's positions: read it (with its ETag) → decide → PUT with If-Match; when
 * someone else wrote in between (409), read again and re-decide, a few times.
 */
async function changePositions(
  ctx: AccountsCliContext,
  accountId: string,
  decide: (positions: PaperPosition[]) => PaperPosition[],
): Promise<Account> {
  const api = ctx.client();
  for (let attempt = 1; ; attempt += 1) {
    const { account, etag } = await api.getAccount(accountId);
    const changes: AccountChangesBody = { positions: decide(account.positions) };
    try {
      return await api.replaceAccount(accountId, changes, etag);
    } catch (error) {
      const raced = error instanceof ApiError && error.code === 'CONFLICT';
      if (!raced || attempt >= WRITE_ATTEMPTS) throw error;
    }
  }
}

interface CreateOptions {
  cash?: number;
  quote: string;
  maxPosition: number;
  maxRisk?: number;
  name?: string;
  exchange?: string;
}

interface PositionOptions {
  size: number;
  entry: number;
  side: string;
  openedAt?: string;
}

/** `tda accounts create|list|show|set-position|remove-position|delete`. */
export function addAccountCommands(program: Command, ctx: AccountsCliContext): void {
  const accounts = program
    .command('accounts')
    .description('paper accounts (and the live exchange account) recommendations size against');
  accounts
    .command('create')
    .description('create a paper account (or, with --exchange, the live exchange account)')
    .argument('<accountId>', 'letters, digits, _ and -, e.g. demo')
    .option('--cash <amount>', 'free cash in the quote currency', number('--cash', 0))
    .option('--quote <currency>', 'quote currency', 'USDT')
    .option(
      '--max-position <fraction>',
      'largest position, fraction of equity',
      number('--max-position', 0, 1),
      0.1,
    )
    .option(
      '--max-risk <fraction>',
      'largest loss to the stop per trade, fraction of equity',
      number('--max-risk', 0, 1),
    )
    .option('--name <name>', 'display name (default: the id)')
    .option(
      '--exchange <id>',
      'ccxt id of the worker’s live exchange account (no cash, no positions)',
    )
    .action(async (accountId: string, opts: CreateOptions) => {
      if (opts.exchange === undefined && opts.cash === undefined) {
        throw new CliError('INVALID_REQUEST', '--cash is required for a paper account');
      }
      const account = await ctx.client().createAccount({
        accountId,
        quoteCurrency: opts.quote.toUpperCase(),
        ...(opts.name === undefined ? {} : { name: opts.name }),
        ...(opts.exchange === undefined ? {} : { exchange: opts.exchange }),
        ...(opts.cash === undefined ? {} : { cash: opts.cash }),
        riskLimits: {
          maxPositionFraction: opts.maxPosition,
          ...(opts.maxRisk === undefined ? {} : { maxRiskPerTradeFraction: opts.maxRisk }),
        },
      });
      print(ctx, [`created ${account.accountId}`, renderAccount(account)]);
    });
  addReadCommands(accounts, ctx);
  addPositionCommands(accounts, ctx);
  accounts
    .command('delete')
    .description('delete an account')
    .argument('<accountId>')
    .action(async (accountId: string) => {
      await ctx.client().deleteAccount(accountId);
      print(ctx, `deleted ${accountId}`);
    });
}

function addReadCommands(accounts: Command, ctx: AccountsCliContext): void {
  accounts
    .command('list')
    .description('your accounts')
    .option('--limit <n>', 'page size (1..100)', number('--limit', 1, 100), 20)
    .option('--cursor <cursor>', 'the nextCursor of a previous page')
    .option('--json', 'print the page as JSON')
    .action(async (opts: { limit: number; cursor?: string; json?: boolean }) => {
      const page = await ctx.client().listAccounts({
        limit: opts.limit,
        ...(opts.cursor === undefined ? {} : { cursor: opts.cursor }),
      });
      if (opts.json === true) {
        print(ctx, JSON.stringify(page, null, 2));
        return;
      }
      print(ctx, renderAccountList(page.accounts));
      if (page.nextCursor !== null) {
        print(
          ctx,
          `next page: tda accounts list --limit ${opts.limit} --cursor ${page.nextCursor}`,
        );
      }
    });
  accounts
    .command('show')
    .description('an account with its positions')
    .argument('<accountId>')
    .option('--json', 'print the account document as JSON')
    .action(async (accountId: string, opts: { json?: boolean }) => {
      const { account } = await ctx.client().getAccount(accountId);
      print(ctx, opts.json === true ? JSON.stringify(account, null, 2) : renderAccount(account));
    });
}

function addPositionCommands(accounts: Command, ctx: AccountsCliContext): void {
  accounts
    .command('set-position')
    .description('open or replace the position in a symbol of a paper account')
    .argument('<accountId>')
    .argument('<symbol>', 'e.g. BTC-USDT (quoted in the account currency)')
    .requiredOption('--size <amount>', 'size in the base asset', positiveNumber('--size'))
    .requiredOption('--entry <price>', 'average entry price', positiveNumber('--entry'))
    .option('--side <side>', 'long or short', 'long')
    .option('--opened-at <rfc3339>', 'when it was opened (runs with an earlier asOf do not see it)')
    .action(async (accountId: string, symbol: string, opts: PositionOptions) => {
      if (opts.side !== 'long' && opts.side !== 'short') {
        throw new CliError('INVALID_REQUEST', `--side must be long or short, got '${opts.side}'`);
      }
      const position: PaperPosition = {
        symbol,
        side: opts.side,
        size: opts.size,
        averageEntry: opts.entry,
        ...(opts.openedAt === undefined ? {} : { openedAt: opts.openedAt }),
      };
      const account = await changePositions(ctx, accountId, (positions) => [
        ...positions.filter((p) => !sameMarket(p.symbol, symbol)),
        position,
      ]);
      print(ctx, renderAccount(account));
    });
  accounts
    .command('remove-position')
    .description('close (remove) the position in a symbol of a paper account')
    .argument('<accountId>')
    .argument('<symbol>')
    .action(async (accountId: string, symbol: string) => {
      const account = await changePositions(ctx, accountId, (positions) => {
        const kept = positions.filter((p) => !sameMarket(p.symbol, symbol));
        if (kept.length === positions.length) {
          throw new CliError('NOT_FOUND', `${accountId} has no position in ${symbol}`);
        }
        return kept;
      });
      print(ctx, renderAccount(account));
    });
}
