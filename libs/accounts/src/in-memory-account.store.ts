import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Account } from '@tda/contracts';
import {
  applyAccountChanges,
  isAccountId,
  prepareNewAccount,
  readAccountDocument,
} from './account-document';
import { toAccountPage, validateAccountListQuery } from './account-list';
import {
  AccountAlreadyExistsError,
  AccountNotFoundError,
  AccountVersionConflictError,
} from './account-store.errors';
import type {
  AccountChanges,
  AccountListPage,
  AccountListQuery,
  AccountStore,
  NewAccount,
  VersionedAccount,
} from './account-store.port';

export interface InMemoryAccountStoreOptions {
  /** Source of createdAt / updatedAt stamps. */
  clock?: () => Date;
}

interface Entry {
  /** Raw stored document: normally an Account, but seedRawDocument may store anything. */
  doc: Record<string, unknown>;
  version: string;
}

/**
 * AccountStore in process memory (TDA_BACKEND=memory and unit tests) with the Firestore adapter's
 * semantics: create-only creates, conditional updates and deletes on an opaque version (a
 * counter), lenient reads, the same list order and cursor. Documents are deep-copied in and out,
 * and every method yields to the event loop first, so concurrent callers really interleave.
 */
export class InMemoryAccountStore implements AccountStore {
  private readonly docs = new Map<string, Entry>();
  private readonly clock: () => Date;
  private sequence = 0;

  constructor(options: InMemoryAccountStoreOptions = {}) {
    this.clock = options.clock ?? (() => new Date());
  }

  async create(account: NewAccount): Promise<VersionedAccount> {
    const doc = prepareNewAccount(account, this.clock());
    await nextTurn();
    if (this.docs.has(doc.accountId)) throw new AccountAlreadyExistsError(doc.accountId);
    const version = this.nextVersion();
    this.docs.set(doc.accountId, { doc: structuredClone(doc), version });
    return { account: doc, version };
  }

  async get(accountId: string): Promise<VersionedAccount | null> {
    await nextTurn();
    const entry = isAccountId(accountId) ? this.docs.get(accountId) : undefined;
    if (entry === undefined) return null;
    return {
      account: readAccountDocument(accountId, structuredClone(entry.doc)),
      version: entry.version,
    };
  }

  async update(
    accountId: string,
    changes: AccountChanges,
    expectedVersion: string,
  ): Promise<VersionedAccount> {
    await nextTurn();
    const entry = this.current(accountId, expectedVersion);
    const next = applyAccountChanges(
      readAccountDocument(accountId, structuredClone(entry.doc)),
      changes,
      this.clock(),
    );
    const version = this.nextVersion();
    this.docs.set(accountId, { doc: structuredClone(next), version });
    return { account: next, version };
  }

  async delete(accountId: string, expectedVersion: string): Promise<void> {
    await nextTurn();
    this.current(accountId, expectedVersion);
    this.docs.delete(accountId);
  }

  async list(query: AccountListQuery): Promise<AccountListPage> {
    const { ownerId, limit, after } = validateAccountListQuery(query);
    await nextTurn();
    const rows: Account[] = [...this.docs.entries()]
      .filter(([id, entry]) => entry.doc['ownerId'] === ownerId && (after === null || id > after))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .slice(0, limit + 1)
      .map(([id, entry]) => readAccountDocument(id, structuredClone(entry.doc)));
    return toAccountPage(rows, limit);
  }

  /** Test hook: stores a document as a foreign or older writer could have left it. */
  seedRawDocument(accountId: string, doc: Record<string, unknown>): void {
    this.docs.set(accountId, { doc: structuredClone(doc), version: this.nextVersion() });
  }

  private current(accountId: string, expectedVersion: string): Entry {
    const entry = isAccountId(accountId) ? this.docs.get(accountId) : undefined;
    if (entry === undefined) throw new AccountNotFoundError(accountId);
    if (entry.version !== expectedVersion) {
      throw new AccountVersionConflictError(accountId, expectedVersion);
    }
    return entry;
  }

  private nextVersion(): string {
    this.sequence += 1;
    return String(this.sequence);
  }
}
