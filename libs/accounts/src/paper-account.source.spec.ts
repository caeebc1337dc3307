import { rejectionOf } from '@tda/test-support';
import { describe, expect, it } from 'vitest';
import { CcxtAccountSource } from './ccxt-account.source';
import { InMemoryAccountStore } from './in-memory-account.store';
import { PaperAccountSource } from './paper-account.source';
import { makeNewAccount, recordedAccountExchange } from './testing';

const AS_OF = Date.parse('2026-09-20T00:00:00Z');

async function storeWith(...accounts: Parameters<typeof makeNewAccount>[0][]) {
  const store = new InMemoryAccountStore({ clock: () => new Date('2026-09-01T08:00:00Z') });
  for (const account of accounts) await store.create(makeNewAccount(account));
  return store;
}

describe('PaperAccountSource', () => {
  it('the stored state is the state at asOf, without positions opened after it', async () => {
    const store = await storeWith({
      positions: [
        { symbol: 'BTC-USDT', side: 'long', size: 0.5, averageEntry: 60_000 },
        {
          symbol: 'ETH-USDT',
          side: 'short',
          size: 2,
          averageEntry: 2_700,
          openedAt: '2026-09-19T12:00:00Z',
        },
        {
          symbol: 'SOL-USDT',
          side: 'long',
          size: 10,
          averageEntry: 150,
          openedAt: '2026-09-20T00:00:01Z',
        },
      ],
    });
    const state = await new PaperAccountSource({ store }).stateAt({
      ownerId: 'owner-a',
      accountId: 'acc-1',
      asOf: AS_OF,
    });
    expect(state).toEqual({
      source: { provider: 'paper', updatedAt: '2026-09-01T08:00:00.000Z' },
      quoteCurrency: 'USDT',
      cash: 10_000,
      reservedCash: 0,
      positions: [
        { symbol: 'BTC-USDT', side: 'long', size: 0.5, averageEntry: 60_000, origin: 'paper' },
        { symbol: 'ETH-USDT', side: 'short', size: 2, averageEntry: 2_700, origin: 'paper' },
      ],
      riskLimits: { maxPositionFraction: 0.1, maxRiskPerTradeFraction: 0.01 },
      notes: { openedAfterAsOf: 1 },
    });
  });

  it('an unknown account and another owner’s account are the same INVALID_STEP_INPUTS', async () => {
    const source = new PaperAccountSource({ store: await storeWith({}) });
    const foreign = await rejectionOf(
      source.stateAt({ ownerId: 'owner-b', accountId: 'acc-1', asOf: AS_OF }),
    );
    const missing = await rejectionOf(
      source.stateAt({ ownerId: 'owner-b', accountId: 'acc-2', asOf: AS_OF }),
    );
    expect(foreign).toMatchObject({ code: 'INVALID_STEP_INPUTS', retryable: false });
    expect((foreign as Error).message).toBe((missing as Error).message.replace('acc-2', 'acc-1'));
  });

  it('an exchange account: balances from the exchange, limits and currency from the document', async () => {
    const store = await storeWith({
      exchange: 'binance',
      cash: 0,
      positions: [],
      riskLimits: { maxPositionFraction: 0.05 },
    });
    const exchange = new CcxtAccountSource({
      exchange: recordedAccountExchange({ positions: undefined }),
      toleranceMs: 75 * 60_000,
      now: () => AS_OF + 10 * 60_000,
    });
    const state = await new PaperAccountSource({ store, exchange }).stateAt({
      ownerId: 'owner-a',
      accountId: 'acc-1',
      asOf: AS_OF,
    });
    expect(state).toMatchObject({
      source: { provider: 'ccxt', exchange: 'binance' },
      quoteCurrency: 'USDT',
      cash: 1034.5678,
      riskLimits: { maxPositionFraction: 0.05 },
    });
    expect(state.positions.map((p) => p.symbol)).toEqual(['BTC-USDT', 'ETH-USDT']);
  });

  it('an exchange account without a configured exchange fails INVALID_STEP_INPUTS', async () => {
    const store = await storeWith({ exchange: 'kraken', cash: 0, positions: [] });
    const error = await rejectionOf(
      new PaperAccountSource({ store }).stateAt({
        ownerId: 'owner-a',
        accountId: 'acc-1',
        asOf: AS_OF,
      }),
    );
    expect(error).toMatchObject({ code: 'INVALID_STEP_INPUTS' });
    expect((error as Error).message).toMatch(/kraken exchange account.*TDA_ACCOUNT_CCXT_EXCHANGE/);
  });
});
