import type { NewAccount } from '../account-store.port';

/** A valid paper account to create; `overrides` replace fields as a whole. */
export function makeNewAccount(overrides: Partial<NewAccount> = {}): NewAccount {
  return {
    accountId: 'acc-1',
    ownerId: 'owner-a',
    name: 'Test account',
    quoteCurrency: 'USDT',
    cash: 10_000,
    positions: [{ symbol: 'BTC-USDT', side: 'long', size: 0.5, averageEntry: 60_000 }],
    riskLimits: { maxPositionFraction: 0.1, maxRiskPerTradeFraction: 0.01 },
    ...overrides,
  };
}
