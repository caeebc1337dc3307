import {
  type CollectionReference,
  type DocumentReference,
  FieldPath,
  type Firestore,
  GrpcStatus,
  Timestamp,
} from '@google-cloud/firestore';
import { firestoreGrpcCode, guardFirestoreCall } from '@tda/flow-store';
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
  AccountStoreUnavailableError,
  AccountVersionConflictError,
} from './account-store.errors';
import {
  DEFAULT_ACCOUNTS_COLLECTION,
  type AccountChanges,
  type AccountListPage,
  type AccountListQuery,
  type AccountStore,
  type NewAccount,
  type VersionedAccount,
} from './account-store.port';

export interface FirestoreAccountStoreOptions {
  /** Collection of the account documents (default `accounts`); tests use a unique one each. */
  collection?: string;
  /** Source of createdAt / updatedAt stamps. */
  clock?: () => Date;
}

/** The version is the document's update time, exact to the nanosecond: `<seconds>.<nanos:9>`. */
function versionOf(time: Timestamp): string {
  return `${time.seconds}.${String(time.nanoseconds).padStart(9, '0')}`;
}

function timestampOf(version: string): Timestamp | null {
  const match = /^(\d{1,15})\.(\d{9})$/.exec(version);
  return match === null ? null : new Timestamp(Number(match[1]), Number(match[2]));
}

/**
 * AccountStore on Firestore: `accounts/{accountId}`. Conditional writes use the update-time
 * precondition (`lastUpdateTime`), never transactions (seed 002). `list` filters by ownerId in the
 * query and orders by document id: an equality filter plus the implicit `__name__` order is served
 * by Firestore's single-field index (no composite index to deploy).
 */
export class FirestoreAccountStore implements AccountStore {
  private readonly collection: CollectionReference;
  private readonly clock: () => Date;

  constructor(firestore: Firestore, options: FirestoreAccountStoreOptions = {}) {
    this.collection = firestore.collection(options.collection ?? DEFAULT_ACCOUNTS_COLLECTION);
    this.clock = options.clock ?? (() => new Date());
  }

  create(account: NewAccount): Promise<VersionedAccount> {
    return this.guarded('create', async () => {
      const doc = prepareNewAccount(account, this.clock());
      try {
        const result = await this.ref(doc.accountId).create(doc);
        return { account: doc, version: versionOf(result.writeTime) };
      } catch (error) {
        if (firestoreGrpcCode(error) === GrpcStatus.ALREADY_EXISTS) {
          throw new AccountAlreadyExistsError(doc.accountId);
        }
        throw error;
      }
    });
  }

  get(accountId: string): Promise<VersionedAccount | null> {
    return this.guarded('get', async () => {
      if (!isAccountId(accountId)) return null;
      const snapshot = await this.ref(accountId).get();
      const data = snapshot.data();
      const updateTime = snapshot.updateTime;
      if (!snapshot.exists || data === undefined || updateTime === undefined) return null;
      return { account: readAccountDocument(accountId, data), version: versionOf(updateTime) };
    });
  }

  update(
    accountId: string,
    changes: AccountChanges,
    expectedVersion: string,
  ): Promise<VersionedAccount> {
    return this.guarded('update', async () => {
      const current = await this.get(accountId);
      if (current === null) throw new AccountNotFoundError(accountId);
      const lastUpdateTime = timestampOf(expectedVersion);
      if (current.version !== expectedVersion || lastUpdateTime === null) {
        throw new AccountVersionConflictError(accountId, expectedVersion);
      }
      const next = applyAccountChanges(current.account, changes, this.clock());
      const writeTime = await this.conditional(accountId, expectedVersion, (ref) =>
        ref.update(
          {
            name: next.name,
            cash: next.cash,
            positions: next.positions,
            riskLimits: next.riskLimits,
            updatedAt: next.updatedAt,
          },
          { lastUpdateTime },
        ),
      );
      return { account: next, version: versionOf(writeTime) };
    });
  }

  delete(accountId: string, expectedVersion: string): Promise<void> {
    return this.guarded('delete', async () => {
      const lastUpdateTime = timestampOf(expectedVersion);
      if (!isAccountId(accountId)) throw new AccountNotFoundError(accountId);
      if (lastUpdateTime === null) throw await this.explainRejection(accountId, expectedVersion);
      await this.conditional(accountId, expectedVersion, (ref) => ref.delete({ lastUpdateTime }));
    });
  }

  list(query: AccountListQuery): Promise<AccountListPage> {
    return this.guarded('list', async () => {
      const { ownerId, limit, after } = validateAccountListQuery(query);
      let q = this.collection.where('ownerId', '==', ownerId).orderBy(FieldPath.documentId());
      if (after !== null) q = q.startAfter(after);
      const snapshot = await q.limit(limit + 1).get();
      const rows: Account[] = snapshot.docs.map((doc) => readAccountDocument(doc.id, doc.data()));
      return toAccountPage(rows, limit);
    });
  }

  /** A write under the update-time precondition; a failed precondition is told apart from a missing document. */
  private async conditional(
    accountId: string,
    expectedVersion: string,
    write: (ref: DocumentReference) => Promise<{ writeTime: Timestamp }>,
  ): Promise<Timestamp> {
    try {
      return (await write(this.ref(accountId))).writeTime;
    } catch (error) {
      const code = firestoreGrpcCode(error);
      if (code === GrpcStatus.NOT_FOUND) throw new AccountNotFoundError(accountId);
      if (code === GrpcStatus.FAILED_PRECONDITION || code === GrpcStatus.ABORTED) {
        throw await this.explainRejection(accountId, expectedVersion);
      }
      throw error;
    }
  }

  private async explainRejection(accountId: string, expectedVersion: string): Promise<Error> {
    const snapshot = await this.ref(accountId).get();
    return snapshot.exists
      ? new AccountVersionConflictError(accountId, expectedVersion)
      : new AccountNotFoundError(accountId);
  }

  /** Every call, with Firestore's transient failures as a retryable AccountStoreUnavailableError. */
  private guarded<T>(operation: string, call: () => Promise<T>): Promise<T> {
    return guardFirestoreCall(
      call,
      (status, cause) => new AccountStoreUnavailableError(operation, status, cause),
    );
  }

  private ref(accountId: string): DocumentReference {
    return this.collection.doc(accountId);
  }
}
