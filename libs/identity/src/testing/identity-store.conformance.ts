import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { issueApiToken } from '../api-token';
import { ApiTokenExistsError } from '../identity-store.errors';
import type { ApiTokenRecord, IdentityStore, UserIdentity } from '../identity-store.port';

export interface IdentityStoreHandle {
  store: IdentityStore;
  cleanup: () => Promise<void>;
}

export function makeTokenRecord(
  tokenId: string,
  overrides: Partial<ApiTokenRecord> = {},
): ApiTokenRecord {
  return {
    tokenId,
    ownerId: 'alice',
    role: 'user',
    name: 'laptop',
    createdAt: '2026-11-01T10:00:00.000Z',
    createdBy: 'operator',
    ...overrides,
  };
}

function makeIdentity(email: string, overrides: Partial<UserIdentity> = {}): UserIdentity {
  return {
    email,
    ownerId: 'alice',
    role: 'user',
    createdAt: '2026-11-01T10:00:00.000Z',
    createdBy: 'operator',
    ...overrides,
  };
}

/** The semantics every IdentityStore adapter shares (identity-store.port.ts). */
export function describeIdentityStoreConformance(
  name: string,
  open: () => Promise<IdentityStoreHandle>,
): void {
  describe(`IdentityStore conformance: ${name}`, () => {
    let handle: IdentityStoreHandle;
    let store: IdentityStore;
    beforeEach(async () => {
      handle = await open();
      store = handle.store;
    });
    afterEach(async () => {
      await handle.cleanup();
    });

    it('finds a token by its hash only, and refuses a second create of the same hash', async () => {
      const issued = issueApiToken();
      const record = makeTokenRecord(issued.tokenId);
      await store.createToken(issued.hash, record);
      expect(await store.findTokenByHash(issued.hash)).toEqual(record);
      expect(await store.findTokenByHash(issueApiToken().hash)).toBeNull();
      await expect(store.createToken(issued.hash, record)).rejects.toBeInstanceOf(
        ApiTokenExistsError,
      );
    });

    it('lists tokens newest first, one owner in the query', async () => {
      const a = issueApiToken();
      const b = issueApiToken();
      const c = issueApiToken();
      await store.createToken(a.hash, makeTokenRecord(a.tokenId));
      await store.createToken(
        b.hash,
        makeTokenRecord(b.tokenId, { createdAt: '2026-11-02T10:00:00.000Z' }),
      );
      await store.createToken(c.hash, makeTokenRecord(c.tokenId, { ownerId: 'bob' }));
      const all = await store.listTokens();
      expect(all.map((t) => t.tokenId)[0]).toBe(b.tokenId);
      expect(all).toHaveLength(3);
      const alice = await store.listTokens({ ownerId: 'alice' });
      expect(alice.map((t) => t.tokenId)).toEqual([b.tokenId, a.tokenId]);
    });

    it('revokes by tokenId once (the first time stays); unknown ids are null', async () => {
      const issued = issueApiToken();
      await store.createToken(issued.hash, makeTokenRecord(issued.tokenId));
      const first = await store.revokeToken(issued.tokenId, '2026-11-03T00:00:00.000Z');
      expect(first?.revokedAt).toBe('2026-11-03T00:00:00.000Z');
      const second = await store.revokeToken(issued.tokenId, '2026-11-04T00:00:00.000Z');
      expect(second?.revokedAt).toBe('2026-11-03T00:00:00.000Z');
      expect((await store.findTokenByHash(issued.hash))?.revokedAt).toBe(
        '2026-11-03T00:00:00.000Z',
      );
      expect(
        await store.revokeToken('tok_0000000000000000', '2026-11-03T00:00:00.000Z'),
      ).toBeNull();
    });

    it('records lastUsedAt and ignores a touch of a missing token', async () => {
      const issued = issueApiToken();
      await store.createToken(issued.hash, makeTokenRecord(issued.tokenId));
      await store.touchToken(issued.hash, '2026-11-05T00:00:00.000Z');
      expect((await store.findTokenByHash(issued.hash))?.lastUsedAt).toBe(
        '2026-11-05T00:00:00.000Z',
      );
      await expect(
        store.touchToken(issueApiToken().hash, '2026-11-05T00:00:00.000Z'),
      ).resolves.toBeUndefined();
    });

    it('maps emails to owners: put replaces, list is by email, delete says whether it did', async () => {
      await store.putUserIdentity(makeIdentity('bob@example.com', { ownerId: 'bob' }));
      await store.putUserIdentity(makeIdentity('alice@example.com'));
      await store.putUserIdentity(makeIdentity('alice@example.com', { role: 'admin' }));
      expect((await store.getUserIdentity('alice@example.com'))?.role).toBe('admin');
      expect(await store.getUserIdentity('carol@example.com')).toBeNull();
      expect((await store.listUserIdentities()).map((i) => i.email)).toEqual([
        'alice@example.com',
        'bob@example.com',
      ]);
      expect(await store.deleteUserIdentity('bob@example.com')).toBe(true);
      expect(await store.deleteUserIdentity('bob@example.com')).toBe(false);
      expect(await store.getUserIdentity('bob@example.com')).toBeNull();
    });
  });
}
