import { describe, expect, it } from 'vitest';
import { InMemoryAccountStore } from './in-memory-account.store';
import { describeAccountStoreConformance, makeNewAccount } from './testing';

describeAccountStoreConformance('in-memory', async ({ clock }) => {
  const store = new InMemoryAccountStore({ clock });
  return {
    store,
    cleanup: async () => undefined,
    seedRawDocument: async (accountId, doc) => store.seedRawDocument(accountId, doc),
  };
});

describe('InMemoryAccountStore', () => {
  it('hands out copies: mutating a returned account changes nothing stored', async () => {
    const store = new InMemoryAccountStore();
    const created = await store.create(makeNewAccount());
    created.account.cash = 1;
    created.account.positions.length = 0;
    expect((await store.get('acc-1'))?.account).toMatchObject({
      cash: 10_000,
      positions: [expect.objectContaining({ symbol: 'BTC-USDT' })],
    });
  });
});
