import { describe, expect, it } from 'vitest';
import { DEMO_ACCOUNT_ID, ensureDemoAccount } from './demo-account';
import { InMemoryAccountStore } from './in-memory-account.store';

describe('ensureDemoAccount', () => {
  it('creates demo once: 10,000 USDT, a small BTC-USDT long, 10% per position', async () => {
    const store = new InMemoryAccountStore();
    const first = await ensureDemoAccount(store, 'local-user');
    expect(first.created).toBe(true);
    expect(first.account).toMatchObject({
      accountId: DEMO_ACCOUNT_ID,
      ownerId: 'local-user',
      quoteCurrency: 'USDT',
      cash: 10_000,
      positions: [{ symbol: 'BTC-USDT', side: 'long', size: 0.01 }],
      riskLimits: { maxPositionFraction: 0.1 },
    });
    const stored = await store.get(DEMO_ACCOUNT_ID);
    await store.update(DEMO_ACCOUNT_ID, { cash: 5 }, stored?.version ?? '');
    const again = await ensureDemoAccount(store, 'local-user');
    expect(again).toMatchObject({ created: false, account: { cash: 5 } });
  });

  it('two processes at once: one creates, the other sees it', async () => {
    const store = new InMemoryAccountStore();
    const results = await Promise.all([
      ensureDemoAccount(store, 'local-user'),
      ensureDemoAccount(store, 'local-user'),
    ]);
    expect(results.map((r) => r.created).sort()).toEqual([false, true]);
  });
});
