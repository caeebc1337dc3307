import { Inject, Injectable } from '@nestjs/common';
import {
  ACCOUNT_ID_PATTERN,
  AccountNotFoundError,
  AccountVersionConflictError,
  findOwnedAccount,
  type AccountListPage,
  type AccountStore,
  type VersionedAccount,
} from '@tda/accounts';
import type { Account } from '@tda/contracts';
import { ACCOUNT_STORE } from './accounts.tokens';
import {
  assertAccountId,
  parseAccountListQuery,
  parseCreateAccount,
  parseReplaceAccount,
} from './account-request';

/** Read → decide → conditional write rounds before a conflicting write gives up (409). */
const WRITE_ATTEMPTS = 3;

/** What the trigger asks at run creation: the account, if it is this owner's. */
export interface AccountLookup {
  findOwned(ownerId: string, accountId: string): Promise<Account | undefined>;
}

/**
 * The accounts API's use cases (paper accounts and the documents standing for the live exchange
 * account). Every read is the request owner's: another owner's account is a 404 like a missing
 * one. Writes are conditional on the version read (no transactions): with the client's `If-Match`
 * a changed account is a 409; without it the service re-reads and re-decides a few times.
 */
@Injectable()
export class AccountsService implements AccountLookup {
  constructor(@Inject(ACCOUNT_STORE) private readonly store: AccountStore) {}

  async findOwned(ownerId: string, accountId: string): Promise<Account | undefined> {
    if (!ACCOUNT_ID_PATTERN.test(accountId)) return undefined;
    return (await findOwnedAccount(this.store, ownerId, accountId))?.account;
  }

  create(body: unknown, ownerId: string): Promise<VersionedAccount> {
    return this.store.create(parseCreateAccount(body, ownerId));
  }

  list(rawQuery: Readonly<Record<string, unknown>>, ownerId: string): Promise<AccountListPage> {
    return this.store.list(parseAccountListQuery(rawQuery, ownerId));
  }

  async get(ownerId: string, accountId: string): Promise<VersionedAccount> {
    assertAccountId(accountId);
    const found = await findOwnedAccount(this.store, ownerId, accountId);
    if (found === undefined) throw new AccountNotFoundError(accountId);
    return found;
  }

  /** Replaces name / cash / positions / riskLimits; `ifMatch`: only from that version. */
  async replace(
    ownerId: string,
    accountId: string,
    body: unknown,
    ifMatch: string | undefined,
  ): Promise<VersionedAccount> {
    assertAccountId(accountId);
    const changes = parseReplaceAccount(body);
    return this.conditionally(ownerId, accountId, ifMatch, (version) =>
      this.store.update(accountId, changes, version),
    );
  }

  async delete(ownerId: string, accountId: string, ifMatch: string | undefined): Promise<void> {
    assertAccountId(accountId);
    await this.conditionally(ownerId, accountId, ifMatch, (version) =>
      this.store.delete(accountId, version),
    );
  }

  /** Read (owner checked) → write at that version; on a lost race re-read unless If-Match pinned it. */
  private async conditionally<T>(
    ownerId: string,
    accountId: string,
    ifMatch: string | undefined,
    write: (version: string) => Promise<T>,
  ): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      const current = await this.get(ownerId, accountId);
      if (ifMatch !== undefined && ifMatch !== current.version) {
        throw new AccountVersionConflictError(accountId, ifMatch);
      }
      try {
        return await write(current.version);
      } catch (error) {
        const retry =
          error instanceof AccountVersionConflictError &&
          ifMatch === undefined &&
          attempt < WRITE_ATTEMPTS;
        if (!retry) throw error;
      }
    }
  }
}
