import type { ApiToken, UserIdentity } from '@tda/contracts';

export type { UserIdentity } from '@tda/contracts';

/** api_tokens/{sha256(token)} and user_identities/{email} (README "Identity and owners"). */
export const DEFAULT_API_TOKENS_COLLECTION = 'api_tokens';
export const DEFAULT_USER_IDENTITIES_COLLECTION = 'user_identities';
/** Lists return at most this many entries (tokens and identities are few; admin use only). */
export const IDENTITY_LIST_MAX = 1_000;

/** A stored API token (contracts/api_token.schema.json); never the token itself. */
export type ApiTokenRecord = ApiToken;

/**
 * Persistence of principals. Every adapter has the same semantics (conformance suite in
 * `@tda/identity/testing`):
 * - `createToken` is create-only by hash; `findTokenByHash` returns revoked and expired records
 *   too (the caller decides and says why).
 * - `revokeToken` by tokenId sets revokedAt once (a second revoke keeps the first time); null
 *   for an unknown id.
 * - `touchToken` sets lastUsedAt; a missing token is ignored.
 * - `listTokens` newest first, optionally one owner's (filtered in the query).
 * - `putUserIdentity` creates or replaces the mapping of an email.
 */
export interface IdentityStore {
  createToken(hash: string, record: ApiTokenRecord): Promise<void>;
  findTokenByHash(hash: string): Promise<ApiTokenRecord | null>;
  listTokens(filter?: { ownerId?: string }): Promise<ApiTokenRecord[]>;
  revokeToken(tokenId: string, at: string): Promise<ApiTokenRecord | null>;
  touchToken(hash: string, at: string): Promise<void>;
  putUserIdentity(identity: UserIdentity): Promise<void>;
  getUserIdentity(email: string): Promise<UserIdentity | null>;
  listUserIdentities(): Promise<UserIdentity[]>;
  /** true when a mapping was deleted. */
  deleteUserIdentity(email: string): Promise<boolean>;
}

/** Newest first, then by id: the order of `listTokens` in every adapter. */
export function byNewestToken(a: ApiTokenRecord, b: ApiTokenRecord): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? 1 : -1;
  return a.tokenId < b.tokenId ? -1 : 1;
}
