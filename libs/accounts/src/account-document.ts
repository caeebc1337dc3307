import { validate, type Account, type ValidationIssue } from '@tda/contracts';
import { InvalidAccountError, InvalidStoredAccountError } from './account-store.errors';
import { ACCOUNT_SCHEMA_VERSION, type AccountChanges, type NewAccount } from './account-store.port';

/** Mirrors AccountId of contracts/common.schema.json (checked by account-document.spec.ts). */
export const ACCOUNT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export function isAccountId(value: string): boolean {
  return ACCOUNT_ID_PATTERN.test(value);
}

/** BASE and QUOTE of a symbol quoted in `quoteCurrency` (BTC-USDT, BTC/USDT, BTCUSDT), else undefined. */
export function marketOf(
  symbol: string,
  quoteCurrency: string,
): { base: string; quote: string } | undefined {
  const upper = symbol.toUpperCase();
  const parts = upper.split(/[/-]/);
  if (parts.length === 2) {
    const [base = '', quote = ''] = parts;
    return quote === quoteCurrency && base !== '' ? { base, quote } : undefined;
  }
  if (upper.endsWith(quoteCurrency) && upper.length > quoteCurrency.length) {
    return { base: upper.slice(0, -quoteCurrency.length), quote: quoteCurrency };
  }
  return undefined;
}

/** What account.schema.json cannot say: positions in the account's currency, one per market. */
export function accountProblems(account: Account): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  account.positions.forEach((position, index) => {
    const path = `/positions/${index}/symbol`;
    const market = marketOf(position.symbol, account.quoteCurrency);
    if (market === undefined) {
      issues.push({
        path,
        message: `'${position.symbol}' is not quoted in the account's ${account.quoteCurrency}`,
        keyword: 'quoteCurrency',
      });
      return;
    }
    const key = `${market.base}-${market.quote}`;
    if (seen.has(key)) {
      issues.push({ path, message: `a second position in ${key}`, keyword: 'uniqueMarket' });
    }
    seen.add(key);
  });
  if (account.exchange !== undefined && (account.cash !== 0 || account.positions.length > 0)) {
    issues.push({
      path: '/exchange',
      message: 'an exchange account holds no cash or positions (they come from the exchange)',
      keyword: 'exchangeAccount',
    });
  }
  return issues;
}

/** Throws InvalidAccountError unless the document may be written. */
export function assertWritableAccount(account: Account): Account {
  const result = validate.account(account);
  if (!result.ok) throw new InvalidAccountError(account.accountId, result.issues);
  const problems = accountProblems(result.value);
  if (problems.length > 0) throw new InvalidAccountError(account.accountId, problems);
  return account;
}

function stamp(now: Date): string {
  return now.toISOString();
}

/** The document `create` writes: the fields in schema order, stamped, checked. */
export function prepareNewAccount(account: NewAccount, now: Date): Account {
  if (typeof account.accountId !== 'string' || !isAccountId(account.accountId)) {
    throw new InvalidAccountError(undefined, [
      { path: '/accountId', message: 'must be 1..64 of A-Z a-z 0-9 _ -', keyword: 'pattern' },
    ]);
  }
  const at = stamp(now);
  return assertWritableAccount({
    schemaVersion: ACCOUNT_SCHEMA_VERSION,
    accountId: account.accountId,
    ownerId: account.ownerId,
    name: account.name,
    quoteCurrency: account.quoteCurrency,
    ...(account.exchange === undefined ? {} : { exchange: account.exchange }),
    cash: account.cash,
    positions: structuredClone(account.positions),
    riskLimits: structuredClone(account.riskLimits),
    createdAt: at,
    updatedAt: at,
  });
}

/** The stored account with `changes` applied and `updatedAt` stamped, checked. */
export function applyAccountChanges(stored: Account, changes: AccountChanges, now: Date): Account {
  const next: Account = structuredClone(stored);
  if (changes.name !== undefined) next.name = changes.name;
  if (changes.cash !== undefined) next.cash = changes.cash;
  if (changes.positions !== undefined) next.positions = structuredClone(changes.positions);
  if (changes.riskLimits !== undefined) next.riskLimits = structuredClone(changes.riskLimits);
  next.updatedAt = stamp(now);
  return assertWritableAccount(next);
}

/** A stored document, read leniently (extra fields kept); broken ones → InvalidStoredAccountError. */
export function readAccountDocument(accountId: string, data: unknown): Account {
  const result = validate.account(data);
  if (!result.ok) throw new InvalidStoredAccountError(accountId, result.issues);
  return result.value;
}
