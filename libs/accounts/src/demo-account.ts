import type { Account } from '@tda/contracts';
import { AccountAlreadyExistsError } from './account-store.errors';
import type { AccountStore, NewAccount } from './account-store.port';

export const DEMO_ACCOUNT_ID = 'demo';

/** The demo paper account: 10,000 USDT, a small BTC-USDT long, at most 10% of equity per position. */
export function demoAccount(ownerId: string): NewAccount {
  return {
    accountId: DEMO_ACCOUNT_ID,
    ownerId,
    name: 'Demo paper account',
    quoteCurrency: 'USDT',
    cash: 10_000,
    positions: [{ symbol: 'BTC-USDT', side: 'long', size: 0.01, averageEntry: 75_000 }],
    riskLimits: { maxPositionFraction: 0.1, maxRiskPerTradeFraction: 0.01 },
  };
}

export interface EnsuredDemoAccount {
  /** false when `demo` already existed (then it is left as it is, whoever owns it). */
  created: boolean;
  account: Account;
}

/**
 * Creates the paper account `demo` for `ownerId` unless an account `demo` exists (create-only:
 * safe to call on every start, and from two processes at once). Account ids are unique across
 * owners, so only the first owner gets it: check `account.ownerId`.
 */
export async function ensureDemoAccount(
  store: Pick<AccountStore, 'create' | 'get'>,
  ownerId: string,
): Promise<EnsuredDemoAccount> {
  const existing = await store.get(DEMO_ACCOUNT_ID);
  if (existing !== null) return { created: false, account: existing.account };
  try {
    return { created: true, account: (await store.create(demoAccount(ownerId))).account };
  } catch (error) {
    if (!(error instanceof AccountAlreadyExistsError)) throw error;
    const raced = await store.get(DEMO_ACCOUNT_ID);
    if (raced === null) throw error;
    return { created: false, account: raced.account };
  }
}
