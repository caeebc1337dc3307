import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  AccountAlreadyExistsError,
  AccountNotFoundError,
  AccountVersionConflictError,
  InvalidAccountError,
  InvalidAccountListQueryError,
  InvalidStoredAccountError,
} from '../account-store.errors';
import type { AccountStore, NewAccount } from '../account-store.port';
import { makeNewAccount } from './account.fixtures';

export interface AccountConformanceContext {
  /** The clock the store must stamp createdAt / updatedAt from; the suite moves it. */
  clock: () => Date;
}

export interface AccountStoreHandle {
  store: AccountStore;
  cleanup: () => Promise<void>;
  /** Writes a document to the backing storage without validation, as a foreign writer could. */
  seedRawDocument: (accountId: string, doc: Record<string, unknown>) => Promise<void>;
}

const T0 = Date.parse('2026-09-01T08:00:00.000Z');

async function rejection<E extends Error>(
  promise: Promise<unknown>,
  type: new (...args: never[]) => E,
): Promise<E> {
  const outcome = await promise.then(
    () => ({ ok: true as const }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  if (outcome.ok) throw new Error(`expected a ${type.name}, but the call succeeded`);
  expect(outcome.error).toBeInstanceOf(type);
  return outcome.error as E;
}

/**
 * The semantics every AccountStore adapter shares (account-store.port.ts), run against the
 * in-memory adapter in a unit spec and against Firestore on the emulator in an int-spec.
 */
export function describeAccountStoreConformance(
  name: string,
  open: (context: AccountConformanceContext) => Promise<AccountStoreHandle>,
): void {
  describe(`AccountStore conformance: ${name}`, () => {
    let now = T0;
    let handle: AccountStoreHandle;
    let store: AccountStore;
    const create = (overrides: Partial<NewAccount> = {}) => store.create(makeNewAccount(overrides));

    beforeEach(async () => {
      now = T0;
      handle = await open({ clock: () => new Date(now) });
      store = handle.store;
    });
    afterEach(async () => {
      await handle.cleanup();
    });

    describeCreateAndGet(() => ({ store, create, handle }));

    it('update replaces the given fields on the current version and stamps updatedAt', async () => {
      const created = await create();
      now = T0 + 60_000;
      const updated = await store.update(
        'acc-1',
        {
          cash: 9_000,
          positions: [],
          riskLimits: { maxPositionFraction: 0.2 },
        },
        created.version,
      );
      expect(updated.version).not.toBe(created.version);
      expect(updated.account).toMatchObject({
        name: 'Test account',
        cash: 9_000,
        positions: [],
        riskLimits: { maxPositionFraction: 0.2 },
        createdAt: '2026-09-01T08:00:00.000Z',
        updatedAt: '2026-09-01T08:01:00.000Z',
      });
      // A replaced map keeps none of the old optional fields.
      expect(updated.account.riskLimits).toEqual({ maxPositionFraction: 0.2 });
      expect(await store.get('acc-1')).toEqual(updated);
    });

    it('update on a stale version, a missing account or to an invalid state writes nothing', async () => {
      const created = await create();
      const first = await store.update('acc-1', { name: 'First' }, created.version);
      await rejection(
        store.update('acc-1', { name: 'Second' }, created.version),
        AccountVersionConflictError,
      );
      await rejection(store.update('nope', { name: 'x' }, first.version), AccountNotFoundError);
      await rejection(store.update('acc-1', { cash: -1 }, first.version), InvalidAccountError);
      expect(await store.get('acc-1')).toEqual(first);
    });

    it('two writers from the same version: exactly one wins', async () => {
      const created = await create();
      const outcomes = await Promise.allSettled([
        store.update('acc-1', { cash: 1 }, created.version),
        store.update('acc-1', { cash: 2 }, created.version),
      ]);
      const won = outcomes.filter((o) => o.status === 'fulfilled');
      const lost = outcomes.filter((o) => o.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect((lost[0] as PromiseRejectedResult).reason).toBeInstanceOf(AccountVersionConflictError);
      const stored = await store.get('acc-1');
      expect(stored?.account.cash).toBe(
        (won[0] as PromiseFulfilledResult<{ account: { cash: number } }>).value.account.cash,
      );
    });

    it('delete is conditional on the version', async () => {
      const created = await create();
      const updated = await store.update('acc-1', { name: 'Renamed' }, created.version);
      await rejection(store.delete('acc-1', created.version), AccountVersionConflictError);
      expect(await store.get('acc-1')).not.toBeNull();
      await store.delete('acc-1', updated.version);
      expect(await store.get('acc-1')).toBeNull();
      await rejection(store.delete('acc-1', updated.version), AccountNotFoundError);
      // The id is free again.
      await create();
    });

    describeList(() => ({ store, create }));
  });
}

function describeCreateAndGet(
  current: () => {
    store: AccountStore;
    create: (o?: Partial<NewAccount>) => ReturnType<AccountStore['create']>;
    handle: AccountStoreHandle;
  },
): void {
  it('create stamps the document and get returns it with the same version', async () => {
    const { store, create } = current();
    const created = await create();
    expect(created.account).toEqual({
      schemaVersion: 1,
      ...makeNewAccount(),
      createdAt: '2026-09-01T08:00:00.000Z',
      updatedAt: '2026-09-01T08:00:00.000Z',
    });
    expect(typeof created.version).toBe('string');
    expect(await store.get('acc-1')).toEqual(created);
  });

  it('create is create-only, across owners too', async () => {
    const { store, create } = current();
    const created = await create();
    await rejection(create({ ownerId: 'owner-b', cash: 1 }), AccountAlreadyExistsError);
    expect(await store.get('acc-1')).toEqual(created);
  });

  it.each([
    ['a negative cash', { cash: -5 }],
    ['a malformed id', { accountId: 'no/slash' }],
    ['a position in another currency', { positions: [pos('ETH-BTC')] }],
    ['two positions in one market', { positions: [pos('BTC-USDT'), pos('BTC/USDT')] }],
    ['an exchange account with cash', { exchange: 'binance', cash: 10 }],
    ['a risk limit above 1', { riskLimits: { maxPositionFraction: 1.5 } }],
  ] as const)('create refuses %s and writes nothing', async (_case, overrides) => {
    const { store, create } = current();
    await rejection(create(overrides as Partial<NewAccount>), InvalidAccountError);
    expect(await store.get('acc-1')).toBeNull();
  });

  it('get: unknown and malformed ids are null; extra stored fields are tolerated', async () => {
    const { store, create, handle } = current();
    expect(await store.get('missing')).toBeNull();
    expect(await store.get('bad/id')).toBeNull();
    const created = await create();
    await handle.seedRawDocument('raw-1', { ...created.account, accountId: 'raw-1', extra: 1 });
    expect((await store.get('raw-1'))?.account).toMatchObject({ accountId: 'raw-1', extra: 1 });
  });

  it('get: a stored document that breaks the schema is InvalidStoredAccountError', async () => {
    const { store, handle } = current();
    await handle.seedRawDocument('broken', { accountId: 'broken', ownerId: 'owner-a' });
    const error = await rejection(store.get('broken'), InvalidStoredAccountError);
    expect(error.code).toBe('INTERNAL_ERROR');
  });
}

function pos(symbol: string) {
  return { symbol, side: 'long' as const, size: 1, averageEntry: 10 };
}

function describeList(
  current: () => {
    store: AccountStore;
    create: (o?: Partial<NewAccount>) => ReturnType<AccountStore['create']>;
  },
): void {
  it('list: only the owner’s accounts, by accountId, keyset pages without repeats or gaps', async () => {
    const { store, create } = current();
    for (const id of ['c', 'a', 'e', 'b', 'd']) await create({ accountId: id });
    await create({ accountId: 'x-other', ownerId: 'owner-b' });
    const pages: string[][] = [];
    let cursor: string | undefined;
    for (let guard = 0; guard < 10; guard += 1) {
      const page = await store.list({
        ownerId: 'owner-a',
        limit: 2,
        ...(cursor === undefined ? {} : { cursor }),
      });
      pages.push(page.accounts.map((a) => a.accountId));
      if (page.nextCursor === null) break;
      cursor = page.nextCursor;
      // An account created between pages before the cursor position never shows up later.
      if (guard === 0) await create({ accountId: 'a0' });
    }
    expect(pages).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
    expect((await store.list({ ownerId: 'owner-b', limit: 10 })).accounts).toHaveLength(1);
    expect(await store.list({ ownerId: 'nobody', limit: 10 })).toEqual({
      accounts: [],
      nextCursor: null,
    });
  });

  it('list: a bad limit or a foreign cursor is InvalidAccountListQueryError', async () => {
    const { store } = current();
    await rejection(store.list({ ownerId: 'o', limit: 0 }), InvalidAccountListQueryError);
    await rejection(store.list({ ownerId: 'o', limit: 101 }), InvalidAccountListQueryError);
    await rejection(
      store.list({ ownerId: 'o', limit: 5, cursor: 'not-a-cursor' }),
      InvalidAccountListQueryError,
    );
  });
}
