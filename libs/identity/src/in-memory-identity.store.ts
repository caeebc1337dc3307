import { ApiTokenExistsError } from './identity-store.errors';
import {
  byNewestToken,
  IDENTITY_LIST_MAX,
  type ApiTokenRecord,
  type IdentityStore,
  type UserIdentity,
} from './identity-store.port';

/** IdentityStore in process memory (TDA_BACKEND=memory, unit tests). Hands out copies. */
export class InMemoryIdentityStore implements IdentityStore {
  private readonly tokens = new Map<string, ApiTokenRecord>();
  private readonly identities = new Map<string, UserIdentity>();

  createToken(hash: string, record: ApiTokenRecord): Promise<void> {
    if (this.tokens.has(hash)) return Promise.reject(new ApiTokenExistsError(record.tokenId));
    this.tokens.set(hash, { ...record });
    return Promise.resolve();
  }

  findTokenByHash(hash: string): Promise<ApiTokenRecord | null> {
    const found = this.tokens.get(hash);
    return Promise.resolve(found === undefined ? null : { ...found });
  }

  listTokens(filter: { ownerId?: string } = {}): Promise<ApiTokenRecord[]> {
    const rows = [...this.tokens.values()]
      .filter((t) => filter.ownerId === undefined || t.ownerId === filter.ownerId)
      .sort(byNewestToken)
      .slice(0, IDENTITY_LIST_MAX)
      .map((t) => ({ ...t }));
    return Promise.resolve(rows);
  }

  revokeToken(tokenId: string, at: string): Promise<ApiTokenRecord | null> {
    const record = [...this.tokens.values()].find((t) => t.tokenId === tokenId);
    if (record === undefined) return Promise.resolve(null);
    record.revokedAt ??= at;
    return Promise.resolve({ ...record });
  }

  touchToken(hash: string, at: string): Promise<void> {
    const record = this.tokens.get(hash);
    if (record !== undefined) record.lastUsedAt = at;
    return Promise.resolve();
  }

  putUserIdentity(identity: UserIdentity): Promise<void> {
    this.identities.set(identity.email, { ...identity });
    return Promise.resolve();
  }

  getUserIdentity(email: string): Promise<UserIdentity | null> {
    const found = this.identities.get(email);
    return Promise.resolve(found === undefined ? null : { ...found });
  }

  listUserIdentities(): Promise<UserIdentity[]> {
    const rows = [...this.identities.values()].sort((a, b) => (a.email < b.email ? -1 : 1));
    return Promise.resolve(rows.slice(0, IDENTITY_LIST_MAX).map((i) => ({ ...i })));
  }

  deleteUserIdentity(email: string): Promise<boolean> {
    return Promise.resolve(this.identities.delete(email));
  }
}
