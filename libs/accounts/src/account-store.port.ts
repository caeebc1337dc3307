import type { Account, PaperPosition, RiskLimits } from '@tda/contracts';

/** accounts/{accountId} (DESIGN.md §2). */
export const DEFAULT_ACCOUNTS_COLLECTION = 'accounts';
export const ACCOUNT_LIST_LIMIT_MAX = 100;
/** Version of the account document format (account.schema.json schemaVersion). */
export const ACCOUNT_SCHEMA_VERSION = 1;

/**
 * An account together with the version it was read at. The version is opaque: callers hand it
 * back to `update` / `delete` as the optimistic precondition (Firestore: the document update
 * time with nanoseconds; in memory: a counter).
 */
export interface VersionedAccount {
  account: Account;
  version: string;
}

/** What `create` takes: the store stamps schemaVersion, createdAt and updatedAt. */
export interface NewAccount {
  accountId: string;
  ownerId: string;
  name: string;
  quoteCurrency: string;
  /** ccxt exchange id: the account is the worker's configured live exchange account. */
  exchange?: string;
  cash: number;
  positions: PaperPosition[];
  riskLimits: RiskLimits;
}

/** What `update` may change (each field replaced as a whole); id, owner, currency stay. */
export interface AccountChanges {
  name?: string;
  cash?: number;
  positions?: PaperPosition[];
  riskLimits?: RiskLimits;
}

export interface AccountListQuery {
  /** Only this owner's accounts: the filter is part of the query, never applied afterwards. */
  ownerId: string;
  /** Page size, 1..ACCOUNT_LIST_LIMIT_MAX. */
  limit: number;
  /** `nextCursor` of the previous page; omit for the first page. */
  cursor?: string;
}

export interface AccountListPage {
  /** Ordered by accountId ascending. */
  accounts: Account[];
  /** null on the last page. */
  nextCursor: string | null;
}

/**
 * Persistence of accounts (paper accounts and the documents standing for a live exchange
 * account). Every adapter has the same semantics, proven by the conformance suite in
 * `@tda/accounts/testing`:
 *
 * - `create` is create-only: an existing accountId (of any owner: ids are unique) →
 *   AccountAlreadyExistsError. The document is checked first (account.schema.json and the rules
 *   a schema cannot say: one position per market, an exchange account holds no cash or
 *   positions) → InvalidAccountError, nothing written.
 * - `get` reads leniently (unknown extra fields tolerated); a stored document that breaks the
 *   schema → InvalidStoredAccountError.
 * - `update` / `delete` apply only if the document is still at `expectedVersion`
 *   (AccountVersionConflictError otherwise, nothing written); a missing account →
 *   AccountNotFoundError. `update` returns the new version and the account as written.
 * - Every write stamps `updatedAt` from the store's clock.
 * - `list` returns one owner's accounts, keyset-paginated by accountId with an opaque cursor
 *   (InvalidAccountListQueryError for one this store did not produce).
 * - No transactions: callers read → decide → write conditionally, and re-read on a conflict.
 */
export interface AccountStore {
  create(account: NewAccount): Promise<VersionedAccount>;
  get(accountId: string): Promise<VersionedAccount | null>;
  update(
    accountId: string,
    changes: AccountChanges,
    expectedVersion: string,
  ): Promise<VersionedAccount>;
  delete(accountId: string, expectedVersion: string): Promise<void>;
  list(query: AccountListQuery): Promise<AccountListPage>;
}

/**
 * The account if it exists and belongs to `ownerId`, else undefined: another owner's account is
 * indistinguishable from a missing one (the API answers 404 for both).
 */
export async function findOwnedAccount(
  store: Pick<AccountStore, 'get'>,
  ownerId: string,
  accountId: string,
): Promise<VersionedAccount | undefined> {
  const found = await store.get(accountId);
  return found !== null && found.account.ownerId === ownerId ? found : undefined;
}
