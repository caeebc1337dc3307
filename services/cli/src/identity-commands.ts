import type { Command } from 'commander';
import type { ApiToken, Role, UserIdentity } from '@tda/contracts';
import { renderTable } from './accounts-commands';
import type { ApiClient } from './api-client';
import { CliError } from './cli-error';

/** What these commands need of the CLI (a structural slice of cli.ts's context). */
export interface IdentityCommandContext {
  io: { stdout: { write(text: string): boolean } };
  client(): ApiClient;
}

function print(ctx: IdentityCommandContext, lines: string[] | string): void {
  ctx.io.stdout.write(`${Array.isArray(lines) ? lines.join('\n') : lines}\n`);
}

function parseRole(value: string): Role {
  if (value !== 'user' && value !== 'admin') {
    throw new CliError('INVALID_REQUEST', `--role must be user or admin, got '${value}'`);
  }
  return value;
}

function parseDays(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 3650) {
    throw new CliError('INVALID_REQUEST', '--expires-days must be an integer in 1..3650');
  }
  return n;
}

const day = (instant: string | undefined): string =>
  (instant ?? '—').slice(0, 16).replace('T', ' ');

export function renderTokens(tokens: readonly ApiToken[]): string {
  if (tokens.length === 0) return 'no tokens';
  return renderTable(
    ['TOKEN ID', 'OWNER', 'ROLE', 'NAME', 'CREATED', 'LAST USED', 'STATE'],
    tokens.map((t) => [
      t.tokenId,
      t.ownerId,
      t.role,
      t.name,
      day(t.createdAt),
      day(t.lastUsedAt),
      t.revokedAt !== undefined
        ? `revoked ${day(t.revokedAt)}`
        : t.expiresAt !== undefined
          ? `expires ${day(t.expiresAt)}`
          : 'active',
    ]),
  );
}

export function renderIdentities(identities: readonly UserIdentity[]): string {
  if (identities.length === 0) return 'no Google accounts mapped';
  return renderTable(
    ['EMAIL', 'OWNER', 'ROLE', 'SINCE'],
    identities.map((i) => [i.email, i.ownerId, i.role, day(i.createdAt)]),
  );
}

interface CreateOptions {
  owner: string;
  role: Role;
  name: string;
  expiresDays?: number;
}

/** `tda whoami`, `tda tokens create|list|revoke`, `tda identities add|list|remove` (admin). */
export function addIdentityCommands(program: Command, ctx: IdentityCommandContext): void {
  program
    .command('whoami')
    .description('the owner and role of the configured credential')
    .action(async () => {
      const me = await ctx.client().whoami();
      print(ctx, `${me.subject}: owner ${me.ownerId}, role ${me.role} (${me.method})`);
    });

  const tokens = program.command('tokens').description('API tokens (admin)');
  tokens
    .command('create')
    .description('create an API token; it is printed once and cannot be shown again')
    .requiredOption('--owner <ownerId>', 'the owner whose runs the token sees and acts on')
    .option('--role <role>', 'user | admin', parseRole, 'user')
    .requiredOption('--name <name>', 'what the token is for, e.g. "ci" or "alice laptop"')
    .option('--expires-days <n>', 'expire after n days (default: never)', parseDays)
    .action(async (opts: CreateOptions) => {
      const created = await ctx.client().createToken({
        ownerId: opts.owner,
        role: opts.role,
        name: opts.name,
        ...(opts.expiresDays === undefined ? {} : { expiresInDays: opts.expiresDays }),
      });
      print(ctx, [
        created.token,
        '',
        `${created.tokenId}: owner ${created.ownerId}, role ${created.role}${created.expiresAt === undefined ? '' : `, expires ${created.expiresAt}`}`,
        'Store the token now: it is not shown again. Use it as TDA_API_TOKEN or sign in to the console with it.',
      ]);
    });
  tokens
    .command('list')
    .description('tokens (never the secrets), newest first')
    .option('--owner <ownerId>', 'only this owner’s')
    .action(async (opts: { owner?: string }) => {
      print(ctx, renderTokens(await ctx.client().listTokens(opts.owner)));
    });
  tokens
    .command('revoke')
    .description('revoke a token: it is refused from the next request on')
    .argument('<tokenId>', 'tok_… as listed')
    .action(async (tokenId: string) => {
      const revoked = await ctx.client().revokeToken(tokenId);
      print(ctx, `${revoked.tokenId} revoked at ${revoked.revokedAt ?? '?'}`);
    });

  const identities = program
    .command('identities')
    .description('Google accounts (ID tokens, Identity-Aware Proxy) mapped to owners (admin)');
  identities
    .command('add')
    .description('map a Google account to an owner and a role (replaces an existing mapping)')
    .argument('<email>', 'the Google account')
    .requiredOption('--owner <ownerId>', 'the owner it acts as')
    .option('--role <role>', 'user | admin', parseRole, 'user')
    .action(async (email: string, opts: { owner: string; role: Role }) => {
      const identity = await ctx
        .client()
        .putIdentity(email, { ownerId: opts.owner, role: opts.role });
      print(ctx, `${identity.email} → owner ${identity.ownerId}, role ${identity.role}`);
    });
  identities
    .command('list')
    .description('the mapped Google accounts')
    .action(async () => {
      print(ctx, renderIdentities(await ctx.client().listIdentities()));
    });
  identities
    .command('remove')
    .description('remove a mapping: the account is refused from the next request on')
    .argument('<email>', 'the Google account')
    .action(async (email: string) => {
      await ctx.client().deleteIdentity(email);
      print(ctx, `${email.toLowerCase()} removed`);
    });
}
